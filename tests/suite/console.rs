//! The web console (`serve --ui`) on the expense approval demo: first over plain HTTP
//! (sign-in, cookies, CSRF and origin checks, identity, the server's own checks of typed
//! answers, escaping, the security headers), then in a real headless Chromium driven over
//! WebDriver (support/webdriver.rs): sign in, a wrong typed output refused in the page,
//! answering, a person who is not an approver, the run page following its run live to
//! the end, the hook-inserted task drawn, hostile text inert.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::http::{self, Reply};
use crate::support::webdriver::Browser;

const APP: &str = "expense_claim";
const ALICE: (&str, &str) = ("alice", "alice-password");
const BOB: (&str, &str) = ("bob", "bob-password");
const HOSTILE: &str = "<img src=x onerror=\"document.body.dataset.pwned=1\">";

/// `cuga-flo serve --ui` on a copy of the demo, with alice and bob as users; killed when
/// dropped.
struct Console {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Console {
    fn start(extra: &[&str]) -> Console {
        let dir = tempfile::tempdir().unwrap();
        let apps = dir.path().join("apps");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        crate::support::copy_dir(&root.join("applications").join(APP), &apps.join(APP));
        for (name, password) in [ALICE, BOB] {
            let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
                .args(["users", "add", name, "--password-stdin", "--run-dir"])
                .arg(dir.path().join("runs"))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    use std::io::Write;
                    c.stdin
                        .take()
                        .unwrap()
                        .write_all(format!("{password}\n").as_bytes())?;
                    c.wait_with_output()
                })
                .unwrap();
            assert!(out.status.success());
        }
        let (child, said) = crate::support::listener::announced(
            Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
                .args(["serve", "--ui", "127.0.0.1:0", APP, "--apps-dir"])
                .arg(&apps)
                .arg("--run-dir")
                .arg(dir.path().join("runs"))
                .args(extra)
                .env("NO_COLOR", "1")
                .env_remove("CUGA_FLO_APPS")
                .stderr(Stdio::null()),
            1,
        );
        let url = said[0]
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("no `listening` line: {said:?}"))
            .to_string();
        Console { child, url, dir }
    }

    fn runs(&self) -> PathBuf {
        self.dir.path().join("runs")
    }

    /// Sign `who` in: the session cookie (`name=value`).
    fn sign_in(&self, who: (&str, &str)) -> String {
        let r = http::post_form(
            &format!("{}/login", self.url),
            &[],
            &[("user", who.0), ("password", who.1)],
        );
        assert_eq!(r.status, 303, "{}", r.body);
        let cookie = r.header("set-cookie").expect("a session cookie");
        for attr in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"] {
            assert!(cookie.contains(attr), "{cookie}");
        }
        cookie.split(';').next().unwrap().to_string()
    }

    fn get(&self, cookie: &str, path: &str) -> Reply {
        http::get(&format!("{}{path}", self.url), &[("Cookie", cookie)])
    }

    fn post(&self, cookie: &str, path: &str, fields: &[(&str, &str)]) -> Reply {
        http::post_form(
            &format!("{}{path}", self.url),
            &[("Cookie", cookie)],
            fields,
        )
    }

    /// The CSRF token of `cookie`'s session (from the tasklist's forms).
    fn csrf(&self, cookie: &str) -> String {
        let page = self.get(cookie, "/tasks").body;
        let at = page.find("name=\"csrf\" value=\"").expect("a form") + 19;
        page[at..at + 64].to_string()
    }

    fn start_run(&self, cookie: &str, employee: &str, amount: &str) -> String {
        let csrf = self.csrf(cookie);
        let r = self.post(
            cookie,
            &format!("/start/{APP}"),
            &[
                ("csrf", &csrf),
                ("var.employee", employee),
                ("var.amount", amount),
                ("var.purpose", "a customer visit"),
            ],
        );
        assert_eq!(r.status, 303, "{}", r.body);
        let to = r.header("location").unwrap();
        to.strip_prefix("/runs/")
            .unwrap()
            .split('?')
            .next()
            .unwrap()
            .to_string()
    }

    fn journal(&self, run: &str) -> Vec<Value> {
        let path = self.runs().join("runs").join(run).join("journal.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            // A line being written as we read is not a record yet.
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Wait until run `run`'s journal has a `question_parked` at `element` still open, or
    /// has ended.
    fn wait_until(&self, run: &str, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let j = self.journal(run);
            if done(&j) {
                return j;
            }
            assert!(Instant::now() < until, "run {run}: no {what}:\n{j:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_asked(&self, run: &str, element: &str) -> Vec<Value> {
        self.wait_until(run, &format!("question at {element}"), |j| {
            let asked = j
                .iter()
                .any(|r| r["event"] == "question_parked" && r["question"]["element"] == element);
            asked && j.last().is_some_and(|r| r["event"] == "run_waiting")
        })
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sign `who` in through the sign-in page (the browser is on it).
fn sign_in_page(b: &Browser, who: (&str, &str)) {
    b.type_into(&b.find("#user"), who.0);
    b.type_into(&b.find("#password"), who.1);
    b.click(&b.find("#login button"));
    b.wait_for(
        "the tasklist",
        "return document.body.dataset.page === 'tasks'",
        60,
    );
    assert_eq!(b.text(&b.find("#who")), who.0);
}

/// Sign out from the page's menu, and wait for the sign-in page.
fn sign_out(b: &Browser) {
    b.click(&b.find("nav form button"));
    b.wait_for(
        "the sign-in page",
        "return document.body.dataset.page === 'login'",
        60,
    );
}

/// The page as `docs/<name>` when CUGA_FLO_UPDATE_SCREENSHOT is set (the pictures of the
/// README and docs/console.md).
fn screenshot(b: &Browser, name: &str) {
    if std::env::var_os("CUGA_FLO_UPDATE_SCREENSHOT").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::write(docs.join(name), b.screenshot()).unwrap();
    }
}

fn key(run: &str, element: &str) -> String {
    format!("{run}:{element}:1")
}

#[test]
fn the_console_signs_people_in_checks_every_post_and_answers_as_runs_answer_does() {
    let c = Console::start(&[]);
    // Nothing without signing in; every page has the security headers.
    let r = http::get(&format!("{}/tasks", c.url), &[]);
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/login?next=%2Ftasks"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(r.header("x-frame-options"), Some("DENY"));
    let wrong = http::post_form(
        &format!("{}/login", c.url),
        &[],
        &[("user", "alice"), ("password", "nope-nope")],
    );
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());
    assert!(wrong.body.contains("unknown name or wrong password"));
    let forged = http::get(
        &format!("{}/tasks", c.url),
        &[("Cookie", "cuga_flo_session=00")],
    );
    assert_eq!(forged.status, 303);

    let alice = c.sign_in(ALICE);
    let bob = c.sign_in(BOB);
    // A start without its required input is refused, saying which; nothing runs.
    let csrf = c.csrf(&alice);
    let r = c.post(
        &alice,
        "/start/expense_claim",
        &[("csrf", &csrf), ("var.amount", "10")],
    );
    assert_eq!(r.status, 422);
    assert!(
        r.body.contains("input `employee` is required"),
        "{}",
        r.body
    );
    let r = c.post(
        &alice,
        "/start/expense_claim",
        &[
            ("csrf", &csrf),
            ("var.employee", "x"),
            ("var.amount", "ten"),
        ],
    );
    assert_eq!(r.status, 422);
    assert!(
        r.body.contains("`amount` is a number, not &quot;ten&quot;"),
        "{}",
        r.body
    );
    assert!(
        !c.runs().join("runs").exists()
            || std::fs::read_dir(c.runs().join("runs")).unwrap().count() == 0
    );

    let run = c.start_run(&alice, HOSTILE, "9000");
    let j = c.wait_asked(&run, "Task_CheckReceipt");
    assert_eq!(
        j[0]["untrusted"]["employee"]["source"],
        "from the web console (alice)"
    );
    // The tasklist shows the question with typed fields; the hostile name is escaped.
    let tasks = c.get(&alice, "/tasks").body;
    assert!(tasks.contains("Check the receipt"), "{tasks}");
    assert!(
        tasks.contains("name=\"out.checked_amount\" data-kind=\"number\" type=\"number\""),
        "{tasks}"
    );
    assert!(!tasks.contains("<img src=x"), "{tasks}");
    assert!(tasks.contains("&lt;img src=x onerror="), "{tasks}");

    let before = c.journal(&run).len();
    let answer = |cookie: &str, fields: &[(&str, &str)]| {
        let mut all = vec![("csrf", c.csrf(cookie))];
        all.extend(fields.iter().map(|(k, v)| (*k, v.to_string())));
        let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
        c.post(cookie, &format!("/runs/{run}/answer"), &all)
    };
    let k = key(&run, "Task_CheckReceipt");
    // Refused, and nothing written: a wrong type, no CSRF token, a foreign origin.
    let r = answer(
        &alice,
        &[
            ("key", &k),
            ("out.receipt_ok", "true"),
            ("out.checked_amount", "lots"),
        ],
    );
    assert_eq!(r.status, 422);
    assert!(
        r.body
            .contains("`checked_amount` is a number, not &quot;lots&quot;"),
        "{}",
        r.body
    );
    let r = c.post(
        &alice,
        &format!("/runs/{run}/answer"),
        &[
            ("key", &k),
            ("out.receipt_ok", "true"),
            ("out.checked_amount", "9000"),
        ],
    );
    assert_eq!(r.status, 403);
    assert!(r.body.contains("CSRF"), "{}", r.body);
    let r = http::post_form(
        &format!("{}/runs/{run}/answer", c.url),
        &[("Cookie", &alice), ("Origin", "http://evil.example")],
        &[
            ("csrf", &c.csrf(&alice)),
            ("key", &k),
            ("out.receipt_ok", "true"),
            ("out.checked_amount", "9000"),
        ],
    );
    assert_eq!(r.status, 403);
    // Another session's token is not this one's.
    let r = c.post(
        &alice,
        &format!("/runs/{run}/answer"),
        &[("csrf", &c.csrf(&bob)), ("key", &k)],
    );
    assert_eq!(r.status, 403);
    assert_eq!(
        c.journal(&run).len(),
        before,
        "a refused answer wrote nothing"
    );

    // Accepted: journalled as alice's, whatever name the form says; the run goes on here
    // and the hook inserts the legal review (9000 > 5000).
    let r = answer(
        &alice,
        &[
            ("key", &k),
            ("out.receipt_ok", "true"),
            ("out.checked_amount", "9000"),
            ("by", "mallory"),
            ("reason", HOSTILE),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let j = c.wait_asked(&run, "Task_LegalReview");
    // The tasklist follows: the answered question is gone, the new one is there.
    let tasks = c.get(&alice, "/tasks").body;
    assert!(
        !tasks.contains("Check the receipt") && tasks.contains("Legal review"),
        "{tasks}"
    );
    let answered = j
        .iter()
        .find(|r| r["event"] == "question_answered")
        .unwrap();
    assert_eq!(answered["by"], "alice");
    assert_eq!(answered["answer"]["outputs"]["checked_amount"], 9000);
    assert!(j.iter().any(|r| r["event"] == "topology_changed"));
    let r = answer(
        &bob,
        &[
            ("key", &key(&run, "Task_LegalReview")),
            ("reason", "contract on file"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    c.wait_asked(&run, "GW_ManagerApproval");

    // Bob is no approver: the approval is not on his tasklist, and his post is refused.
    let bobs = c.get(&bob, "/tasks").body;
    assert!(!bobs.contains("Manager approval"), "{bobs}");
    assert!(
        c.get(&alice, "/tasks?mine=1")
            .body
            .contains("Manager approval")
    );
    let before = c.journal(&run).len();
    let r = answer(
        &bob,
        &[
            ("key", &key(&run, "GW_ManagerApproval")),
            ("decision", "approve"),
        ],
    );
    assert_eq!(r.status, 422);
    assert!(
        r.body
            .contains("`bob` may not decide guardrail `GW_ManagerApproval`"),
        "{}",
        r.body
    );
    assert_eq!(c.journal(&run).len(), before);

    // Alice approves; the payment task asks next; answered, the run completes.
    let r = answer(
        &alice,
        &[
            ("key", &key(&run, "GW_ManagerApproval")),
            ("decision", "approve"),
            ("reason", "contract on file"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    c.wait_asked(&run, "Task_Pay");
    let r = answer(
        &alice,
        &[
            ("key", &key(&run, "Task_Pay")),
            ("out.payment_ref", "PAY-7"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let j = c.wait_until(&run, "end", |j| {
        j.last().is_some_and(|r| r["event"] == "run_finished")
    });
    assert_eq!(j.last().unwrap()["status"], "completed");
    let routed = j.iter().find(|r| r["event"] == "gateway_routed").unwrap();
    assert_eq!(routed["flows"][0], "Flow_Approved");
    let approved = j
        .iter()
        .find(|r| r["event"] == "question_answered" && r["key"] == key(&run, "GW_ManagerApproval"))
        .unwrap();
    assert_eq!(approved["by"], "alice");
    // The journal verifies, and the run page shows the end, escaped.
    let page = c.get(&alice, &format!("/runs/{run}")).body;
    assert!(page.contains("id=\"status\">completed"), "{page}");
    assert!(!page.contains("<img src=x"), "{page}");
    let verify = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["runs", "verify", &run, "--run-dir"])
        .arg(c.runs())
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );

    // Cancelling a waiting run: journalled with who and why.
    let other = c.start_run(&bob, "dave", "50");
    c.wait_asked(&other, "Task_CheckReceipt");
    let r = c.post(
        &bob,
        &format!("/runs/{other}/cancel"),
        &[("csrf", &c.csrf(&bob)), ("reason", "claimed twice")],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let j = c.wait_until(&other, "cancellation", |j| {
        j.last().is_some_and(|r| r["event"] == "run_finished")
    });
    let cancelled = j.iter().find(|r| r["event"] == "run_cancelled").unwrap();
    assert_eq!(cancelled["by"], "bob");
    assert_eq!(cancelled["reason"], "claimed twice");
    assert_eq!(j.last().unwrap()["status"], "cancelled");
}

/// Behind a signing-in proxy, the header it sets names the person, and nothing else does.
#[test]
fn behind_a_proxy_its_header_names_the_person() {
    let c = Console::start(&["--user-header", "X-Forwarded-User"]);
    let r = http::get(
        &format!("{}/tasks", c.url),
        &[("X-Forwarded-User", "carol")],
    );
    assert_eq!(r.status, 200);
    assert!(
        r.body.contains("<strong id=\"who\">carol</strong>"),
        "{}",
        r.body
    );
    let r = http::get(&format!("{}/tasks", c.url), &[]);
    assert_eq!(r.status, 303, "no header: not signed in");
    let r = http::get(
        &format!("{}/tasks", c.url),
        &[("X-Forwarded-User", "carol <b>")],
    );
    assert_eq!(r.status, 303, "not a user name: not signed in");
    // No sign-in form: the proxy signs people in.
    let r = http::get(
        &format!("{}/login", c.url),
        &[("X-Forwarded-User", "carol")],
    );
    assert_eq!(r.status, 303);
}

#[test]
fn a_console_without_sign_in_is_served_on_loopback_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["serve", "--ui", "0.0.0.0:0", "--all", "--run-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to serve the console on 0.0.0.0:0 without sign-in"),
        "{err}"
    );
    // A users file that is not one is refused at start, pointing at the line.
    std::fs::write(dir.path().join("users"), "# people\nalice:plaintext\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["serve", "--ui", "127.0.0.1:0", "--all", "--run-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("users:2: the hash of `alice` is not a PHC string"),
        "{err}"
    );
    // `users add` keeps no password, and refuses a short one.
    let out = Command::new(env!("CARGO_BIN_EXE_cuga-flo"))
        .args(["users", "add", "carol", "--password-stdin", "--users"])
        .arg(dir.path().join("u2"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("too short"));
}

#[test]
fn a_person_answers_in_a_real_browser_and_the_run_page_follows_the_run_live() {
    let answers = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        answers.path(),
        "answers:\n  Task_Pay: {outputs: {payment_ref: PAY-42}, reason: paid by the bank run}\n",
    )
    .unwrap();
    let c = Console::start(&["--answers", answers.path().to_str().unwrap()]);
    let Some(b) = Browser::start() else { return };
    // Signing in through the page.
    b.go(&format!("{}/tasks", c.url));
    assert!(b.current_url().contains("/login?next=%2Ftasks"));
    sign_in_page(&b, ALICE);

    // Starting a run from the app's form.
    b.go(&format!("{}/start/{APP}", c.url));
    b.type_into(&b.find("input[name='var.employee']"), HOSTILE);
    b.type_into(&b.find("input[name='var.amount']"), "9000");
    b.click(&b.find("#start button"));
    b.wait_for(
        "the run page",
        "return document.body.dataset.page === 'run'",
        60,
    );
    let run = b.text(&b.find("#run-id"));
    c.wait_asked(&run, "Task_CheckReceipt");

    // The tasklist's form refuses a wrong typed output in the page: nothing is sent.
    b.go(&format!("{}/tasks", c.url));
    let form = format!("#q-{run}-Task_CheckReceipt");
    b.script(
        "document.querySelector(arguments[0] + \" select[name='out.receipt_ok']\").value = 'true';",
        serde_json::json!([form]),
    );
    let amount = b.find(&format!("{form} input[name='out.checked_amount']"));
    b.type_into(&amount, "lots");
    b.click(&b.find(&format!("{form} button[type=submit]")));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        b.script("return document.body.dataset.page", serde_json::json!([])),
        "tasks"
    );
    let valid = b.script(
        "return document.querySelector(arguments[0]).checkValidity()",
        serde_json::json!([format!("{form} input[name='out.checked_amount']")]),
    );
    assert_eq!(valid, false);
    assert!(
        !c.journal(&run)
            .iter()
            .any(|r| r["event"] == "question_answered")
    );
    b.type_into(&amount, "9000");
    b.click(&b.find(&format!("{form} button[type=submit]")));
    b.wait_for(
        "the run page",
        "return document.body.dataset.page === 'run'",
        60,
    );
    c.wait_asked(&run, "Task_LegalReview");

    // The hostile name is inert on every page: shown as text, never run.
    b.go(&format!("{}/tasks", c.url));
    assert!(b.script("return document.body.dataset.pwned === undefined && document.querySelectorAll('img[src=x]').length === 0", serde_json::json!([])) == true);
    let page_text = b.text(&b.find("main"));
    assert!(page_text.contains("Legal review"), "{page_text}");

    // The legal review, answered from its form.
    b.click(&b.find(&format!("#q-{run}-Task_LegalReview button[type=submit]")));
    b.wait_for(
        "the run page",
        "return document.body.dataset.page === 'run'",
        60,
    );
    c.wait_asked(&run, "GW_ManagerApproval");
    b.go(&format!("{}/tasks", c.url));
    screenshot(&b, "console-tasklist.png");

    // Bob, in the same browser after alice signs out: the approval is not on his
    // tasklist, and an answer he posts anyway (from his own page, with his CSRF token) is
    // refused by the server, saying why, and writes nothing.
    sign_out(&b);
    sign_in_page(&b, BOB);
    assert!(
        b.try_find(&format!("#q-{run}-GW_ManagerApproval"))
            .is_none(),
        "bob sees the approval"
    );
    let before = c.journal(&run).len();
    let refused = b.script(
        "var csrf = document.querySelector('input[name=csrf]').value;\
         var body = new URLSearchParams({csrf: csrf, key: arguments[0], decision: 'approve'});\
         var x = new XMLHttpRequest(); x.open('POST', '/runs/' + arguments[1] + '/answer', false);\
         x.setRequestHeader('Content-Type', 'application/x-www-form-urlencoded'); x.send(body.toString());\
         return [x.status, x.responseText];",
        serde_json::json!([key(&run, "GW_ManagerApproval"), run]),
    );
    assert_eq!(refused[0], 422, "{refused}");
    assert!(
        refused[1]
            .as_str()
            .unwrap()
            .contains("may not decide guardrail"),
        "{refused}"
    );
    assert_eq!(c.journal(&run).len(), before, "bob's answer wrote nothing");
    // Back to alice.
    sign_out(&b);
    sign_in_page(&b, ALICE);

    // The run page: the diagram drawn, the inserted legal review on it, waiting at the
    // approval; it follows the run live when alice approves from another session.
    b.go(&format!("{}/runs/{run}", c.url));
    b.wait_for(
        "the diagram",
        "return document.body.dataset.report === 'ready'",
        60,
    );
    assert!(
        b.script(
            "return !!document.querySelector('[data-element-id=\"Task_LegalReview\"]')",
            serde_json::json!([])
        ) == true,
        "the inserted task is drawn"
    );
    assert!(b.script("return !!document.querySelector('[data-element-id=\"GW_ManagerApproval\"].cf-current')", serde_json::json!([])) == true, "the approval is marked as where the run waits");
    b.wait_for(
        "the live stream",
        "return document.body.dataset.live === 'open'",
        60,
    );
    let alice = c.sign_in(ALICE);
    let r = c.post(
        &alice,
        &format!("/runs/{run}/answer"),
        &[
            ("csrf", &c.csrf(&alice)),
            ("key", &key(&run, "GW_ManagerApproval")),
            ("decision", "approve"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    b.wait_for(
        "the page to reach the end",
        "var s = document.getElementById('status'); return s && s.textContent === 'completed' && document.body.dataset.report === 'ready'",
        60,
    );
    let j = c.journal(&run);
    assert_eq!(j.last().unwrap()["status"], "completed");
    screenshot(&b, "console-run.png");
    let errors: Vec<String> = b
        .console_errors()
        .into_iter()
        // The favicon nobody serves, and bob's refused post (422) above: expected.
        .filter(|e| !e.contains("favicon") && !e.contains("status of 422"))
        .collect();
    assert!(
        errors.is_empty(),
        "the pages logged errors (CSP?): {errors:?}"
    );
}
