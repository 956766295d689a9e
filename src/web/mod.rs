//! `cuga-flo serve --ui HOST:PORT`: the web console for the apps a server serves, on the
//! same run host as its A2A agents ([`crate::run::agent::Runner`]).
//!
//! - **Tasklist** (`/tasks`): the open questions of the waiting runs the signed-in person
//!   may answer (a guardrail's approvers when it names any), each with its policy, the
//!   run's variables (untrusted ones marked with their source), its deadline and a form
//!   made from what it offers; an answer is checked and journalled as `runs answer` does
//!   it, with the signed-in name as `by`, and the run goes on in this server.
//! - **Runs** (`/runs`, `/runs/<id>`): the runs, filtered by app, status and age; a run's
//!   page draws its diagram (the bundled bpmn-js viewer), its decisions and its journal,
//!   follows the run live (`/runs/<id>/live`, server-sent events) and cancels it.
//! - **Start** (`/start/<app>`): a run of an app from a form made from its variables,
//!   its scenarios' inputs as presets.
//!
//! Safety: people sign in against a users file (argon2id hashes, `cuga-flo users add`)
//! or a trusted reverse proxy's header; with neither, only a loopback address is served,
//! as the local user. Sessions live in `Secure; HttpOnly; SameSite=Strict` cookies; every
//! form carries the session's CSRF token and every POST is checked for it and for its
//! `Origin`; every page is rendered by templates that escape what they show (names,
//! reasons and variables come from models and people) and served with a strict
//! Content-Security-Policy (scripts and styles from this server only, no inline script);
//! the connections have the header-read timeout of `serve --http` and bodies a cap.

// A handler's refusal is the page it answers with (an axum `Response`, large by nature).
#![allow(clippy::result_large_err)]

pub mod session;
pub mod users;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use minijinja::Environment;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::journal::{Event, FlowState, Record, store};
use crate::reason::park::Given;
use crate::run::agent::Runner;
use crate::run::answer::AnswerRequest;
use crate::run::pending::Open;
use crate::view::report;
use crate::vocab::{Offered, VarKind};

use session::{Session, Sessions};

/// Who the people are.
pub enum Identity {
    /// Sign in with a name and password from a users file.
    Users(users::Users),
    /// A trusted reverse proxy signs people in and names them in this header.
    Header(String),
    /// Nobody signs in: everyone reaching the (loopback) address is this local user.
    Local(String),
}

/// How the console serves.
pub struct Settings {
    pub identity: Identity,
    /// Header-read timeout, and how long a connection may idle.
    pub read_timeout: Duration,
}

/// The most a request body may hold.
const MAX_BODY: usize = 256 * 1024;
/// The journal rows a run's page shows, the last ones (`?all=1`: every one).
const JOURNAL_ROWS: usize = 300;

/// The most questions or runs one page lists (`?from=N` pages on).
const PAGE_ROWS: usize = 100;

/// The content security policy of every page: nothing but this server's own scripts,
/// styles and images; no inline script, no framing, forms post here only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The console, serving.
pub struct WebConsole {
    addr: SocketAddr,
    stop: CancellationToken,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl WebConsole {
    /// Listen on `addr` and serve the console for `runner`'s apps.
    pub async fn bind(
        addr: SocketAddr,
        runner: Arc<Runner>,
        settings: Settings,
    ) -> std::io::Result<WebConsole> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let mut apps: Vec<String> = runner
            .apps
            .values()
            .map(|s| s.loaded.name.clone())
            .collect();
        apps.sort();
        let console = Arc::new(Console {
            runner,
            identity: settings.identity,
            sessions: Sessions::default(),
            pages: templates(),
            local_csrf: session::token(),
            apps,
            pending: Default::default(),
        });
        let router = Router::new()
            .route("/", get(|| async { redirect("/tasks") }))
            .route("/login", get(login_page).post(login))
            .route("/logout", post(logout))
            .route("/tasks", get(tasks))
            .route("/runs", get(runs))
            .route("/runs/{id}", get(run_page))
            .route("/runs/{id}/live", get(live))
            .route("/runs/{id}/answer", post(answer))
            .route("/runs/{id}/cancel", post(cancel))
            .route("/start", get(start_page_all))
            .route("/start/{app}", get(start_page).post(start))
            .route("/assets/{name}", get(asset))
            .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
            .layer(axum::middleware::map_response(secure_headers))
            .with_state(console);
        let stop = CancellationToken::new();
        let served = tokio::spawn(crate::serving::accept(
            listener,
            router,
            stop.clone(),
            settings.read_timeout,
        ));
        Ok(WebConsole { addr, stop, served })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting; the requests in flight finish.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.served).await;
    }
}

struct Console {
    runner: Arc<Runner>,
    identity: Identity,
    sessions: Sessions,
    pages: Environment<'static>,
    /// The CSRF token of every form when nobody signs in (local, or a proxy's header).
    local_csrf: String,
    /// The served apps' names, sorted.
    apps: Vec<String>,
    /// The open questions of the runs, read again only from the journals that changed.
    pending: crate::run::pending::Cache,
}

fn templates() -> Environment<'static> {
    let mut env = Environment::new();
    // `.html` names: every `{{ }}` is escaped for HTML.
    for (name, text) in [
        ("base.html", include_str!("templates/base.html")),
        ("login.html", include_str!("templates/login.html")),
        ("question.html", include_str!("templates/question.html")),
        ("tasks.html", include_str!("templates/tasks.html")),
        ("runs.html", include_str!("templates/runs.html")),
        ("run.html", include_str!("templates/run.html")),
        ("start.html", include_str!("templates/start.html")),
        ("error.html", include_str!("templates/error.html")),
        ("pager.html", include_str!("templates/pager.html")),
    ] {
        env.add_template(name, text)
            .expect("the console's templates parse");
    }
    env
}

/// Headers every response gets.
async fn secure_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

fn redirect(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A form's or a query's fields, in order (a name may repeat).
fn fields(text: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(text.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn query(uri: &Uri) -> Vec<(String, String)> {
    fields(uri.query().unwrap_or_default())
}

impl Console {
    /// The person making the request, if signed in.
    fn who(&self, headers: &HeaderMap) -> Option<Session> {
        match &self.identity {
            Identity::Local(user) => Some(self.fixed(user)),
            Identity::Header(name) => {
                let user = headers.get(name.as_str())?.to_str().ok()?.trim();
                users::valid_name(user).then(|| self.fixed(user))
            }
            Identity::Users(_) => {
                let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
                self.sessions
                    .get(session::cookie(cookies, session::COOKIE)?)
            }
        }
    }

    fn fixed(&self, user: &str) -> Session {
        Session::new(user.to_string(), self.local_csrf.clone())
    }

    /// Render page `name` for `who` with `context`.
    fn page(
        &self,
        name: &str,
        who: Option<&Session>,
        status: StatusCode,
        context: Value,
    ) -> Response {
        let mut ctx = match context {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if let Some(s) = who {
            ctx.insert("user".into(), json!(s.user));
            ctx.insert("csrf".into(), json!(s.csrf));
        }
        ctx.insert(
            "local".into(),
            json!(matches!(self.identity, Identity::Local(_))),
        );
        ctx.insert(
            "can_sign_out".into(),
            json!(matches!(self.identity, Identity::Users(_))),
        );
        let rendered = self
            .pages
            .get_template(name)
            .and_then(|t| t.render(minijinja::value::Serde(&ctx)));
        match rendered {
            Ok(html) => {
                let mut r = (status, html).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/html; charset=utf-8"),
                );
                r
            }
            Err(e) => {
                tracing::error!("web console: page {name}: {e:#}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the page cannot be drawn",
                )
                    .into_response()
            }
        }
    }

    fn error(&self, who: Option<&Session>, status: StatusCode, problem: &str) -> Response {
        self.page(
            "error.html",
            who,
            status,
            json!({"heading": status.canonical_reason().unwrap_or("Error"), "problem": problem}),
        )
    }

    /// A POST is refused unless it comes from a page of this server (its `Origin`, when
    /// sent) and carries the session's CSRF token.
    fn checked_post(
        &self,
        headers: &HeaderMap,
        form: &[(String, String)],
    ) -> Result<Session, Response> {
        if !same_origin(headers) {
            return Err(self.error(
                None,
                StatusCode::FORBIDDEN,
                "refused: the form was not sent from this console",
            ));
        }
        let Some(who) = self.who(headers) else {
            return Err(self.error(None, StatusCode::FORBIDDEN, "refused: sign in first"));
        };
        let sent = field(form, "csrf").unwrap_or_default();
        if !session::same(sent, &who.csrf) {
            return Err(self.error(
                Some(&who),
                StatusCode::FORBIDDEN,
                "refused: the form's CSRF token is missing or stale; reload the page and try again",
            ));
        }
        Ok(who)
    }

    /// A posted form's fields and who sent it: refused unless its body is within the cap
    /// and [`Console::checked_post`] passes.
    fn posted(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<(Session, Vec<(String, String)>), Response> {
        if body.len() > MAX_BODY {
            return Err(self.error(None, StatusCode::PAYLOAD_TOO_LARGE, "the form is too large"));
        }
        let form = fields(&String::from_utf8_lossy(body));
        let who = self.checked_post(headers, &form)?;
        Ok((who, form))
    }

    /// The signed-in person, or a redirect to the sign-in page.
    fn signed_in(&self, headers: &HeaderMap, uri: &Uri) -> Result<Session, Response> {
        self.who(headers).ok_or_else(|| {
            let next: String = form_urlencoded::byte_serialize(
                uri.path_and_query().map_or("/", |p| p.as_str()).as_bytes(),
            )
            .collect();
            redirect(&format!("/login?next={next}"))
        })
    }

    fn served_app(&self, name: &str) -> bool {
        self.apps.iter().any(|a| a == name)
    }
}

/// Whether the request's `Origin` (when it sends one) is the host it was sent to.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return true;
    };
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    origin == format!("http://{host}") || origin == format!("https://{host}")
}

// ---- sign in ----

async fn login_page(State(c): State<Arc<Console>>, uri: Uri) -> Response {
    let next = safe_next(field(&query(&uri), "next"));
    if !matches!(c.identity, Identity::Users(_)) {
        return redirect(&next);
    }
    c.page("login.html", None, StatusCode::OK, json!({"next": next}))
}

/// Where to go after signing in: a path of this console only.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_string(),
        _ => "/tasks".to_string(),
    }
}

async fn login(State(c): State<Arc<Console>>, headers: HeaderMap, body: Bytes) -> Response {
    let Identity::Users(users) = &c.identity else {
        return redirect("/tasks");
    };
    if !same_origin(&headers) {
        return c.error(
            None,
            StatusCode::FORBIDDEN,
            "refused: the form was not sent from this console",
        );
    }
    let form = fields(&String::from_utf8_lossy(&body));
    let user = field(&form, "user").unwrap_or_default().trim().to_string();
    let password = field(&form, "password").unwrap_or_default().to_string();
    let next = safe_next(field(&form, "next"));
    // The hash is slow on purpose: checked off the runtime's threads.
    let ok = {
        let (users, user, password) = (users.clone(), user.clone(), password);
        tokio::task::spawn_blocking(move || users.check(&user, &password))
            .await
            .unwrap_or(false)
    };
    if !ok {
        tracing::warn!("web console: a sign-in failed");
        return c.page(
            "login.html",
            None,
            StatusCode::UNAUTHORIZED,
            json!({"next": next, "problem": "unknown name or wrong password"}),
        );
    }
    tracing::info!("web console: {user} signed in");
    let token = c.sessions.open(&user);
    let mut r = redirect(&next);
    if let Ok(v) = HeaderValue::from_str(&session::set_cookie(Some(&token))) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

async fn logout(State(c): State<Arc<Console>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(r) = c.posted(&headers, &body) {
        return r;
    }
    if let Some(token) = (headers.get(header::COOKIE).and_then(|h| h.to_str().ok()))
        .and_then(|h| session::cookie(h, session::COOKIE))
    {
        c.sessions.close(token);
    }
    let mut r = redirect("/login");
    if let Ok(v) = HeaderValue::from_str(&session::set_cookie(None)) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

// ---- the tasklist ----

/// A question as a page shows it.
#[derive(Serialize)]
struct QuestionView {
    dom_id: String,
    run_id: String,
    app: String,
    key: String,
    element: String,
    kind: &'static str,
    label: String,
    asked: String,
    deadline: Option<String>,
    addressed: bool,
    instruction: Option<String>,
    policy: Option<String>,
    policy_path: Option<String>,
    variables: Vec<VarView>,
    form: Value,
}

#[derive(Serialize)]
struct VarView {
    name: String,
    value: String,
    untrusted: Option<String>,
}

fn question_view(o: &Open, names: &crate::view::Names, user: &str) -> QuestionView {
    let q = &o.question;
    let label = q
        .name
        .clone()
        .or_else(|| names.node(&q.element).map(str::to_string))
        .unwrap_or_else(|| q.element.clone());
    let node = |id: &str| {
        names
            .node(id)
            .map_or_else(|| id.to_string(), str::to_string)
    };
    let form = match (&q.remote, &q.approval, &q.offered) {
        (Some(r), _, _) if r.until_ms.is_some() && r.state == "input-required" => {
            json!({"kind": "reply", "agent": r.agent})
        }
        (Some(r), _, _) => {
            json!({"kind": "remote", "agent": r.agent, "task_id": r.task_id, "state": r.state})
        }
        (None, Some(a), _) => json!({
            "kind": "approval",
            "approve": flow_label(names, &a.approve_flow),
            "deny": flow_label(names, &a.deny_flow),
            "approvers": a.approvers,
        }),
        (None, None, Offered::Flows { flows, multiple }) => json!({
            "kind": "flows",
            "multiple": multiple,
            "flows": flows.iter().map(|f| json!({
                "id": f.id,
                "label": match &f.label {
                    Some(l) => format!("{l} → {}", node(&f.target)),
                    None => format!("→ {}", node(&f.target)),
                },
            })).collect::<Vec<_>>(),
        }),
        (
            None,
            None,
            Offered::Actions {
                actions,
                targets,
                insertable,
                settable,
                ..
            },
        ) => json!({
            "kind": "actions",
            "actions": actions.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
            "targets": targets.iter().chain(insertable).map(|t| json!({"id": t, "label": node(t)})).collect::<Vec<_>>(),
            "settable": settable.iter().map(|s| json!({"name": s.name, "kind": kind_name(s.kind)})).collect::<Vec<_>>(),
        }),
        (
            None,
            None,
            Offered::ToolCall {
                tool,
                arguments,
                why,
                said,
            },
        ) => json!({
            "kind": "tool",
            "tool": tool,
            "arguments": arguments.to_string(),
            "why": why,
            "said": said,
        }),
        (None, None, Offered::Outputs { outputs, kinds }) => json!({
            "kind": "outputs",
            "outputs": outputs.iter().map(|name| {
                let kind = kinds.get(name).copied().unwrap_or(VarKind::Any);
                json!({"name": name, "kind": kind_name(kind), "described": kind.described()})
            }).collect::<Vec<_>>(),
        }),
    };
    QuestionView {
        dom_id: format!("{}-{}", o.run_id, q.element),
        run_id: o.run_id.clone(),
        app: o.app.clone(),
        key: q.key.clone(),
        element: q.element.clone(),
        kind: q.kind.as_str(),
        label,
        asked: crate::view::utc_time(o.asked_at_ms),
        deadline: q.deadline_ms.map(crate::view::utc_time),
        addressed: o.addressed_to(user),
        instruction: q.instruction.clone(),
        policy: q.policy.clone(),
        // The policy's file, not where the server keeps it.
        policy_path: (q.policy_path.as_deref())
            .and_then(|p| std::path::Path::new(p).file_name())
            .map(|f| f.to_string_lossy().into_owned()),
        variables: (o.variables.iter())
            .map(|(name, value)| VarView {
                name: name.clone(),
                value: crate::view::short(&crate::view::value(value), 400),
                untrusted: o.untrusted.get(name).map(|t| t.source.clone()),
            })
            .collect(),
        form,
    }
}

fn flow_label(names: &crate::view::Names, flow: &str) -> String {
    match names.flow(flow) {
        Some((_, target)) => format!("→ {}", names.node(target).unwrap_or(target)),
        None => flow.to_string(),
    }
}

fn kind_name(kind: VarKind) -> &'static str {
    match kind {
        VarKind::String => "string",
        VarKind::Number => "number",
        VarKind::Boolean => "boolean",
        VarKind::List => "list",
        VarKind::Object => "object",
        VarKind::Any => "any",
    }
}

fn names_of(c: &Console, app: &str) -> crate::view::Names {
    c.runner
        .served(app)
        .map(|s| crate::view::Names::from_app(&s.loaded))
        .unwrap_or_default()
}

async fn tasks(State(c): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let who = match c.signed_in(&headers, &uri) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let q = query(&uri);
    let app = field(&q, "app")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let mine = field(&q, "mine") == Some("1");
    let apps = c.apps.clone();
    let wanted = app.clone();
    let console = c.clone();
    let open = tokio::task::spawn_blocking(move || {
        let base = console.runner.journals.base();
        console.pending.open(base, wanted.as_deref())
    })
    .await
    .unwrap_or_default();
    let from: usize = field(&q, "from").and_then(|f| f.parse().ok()).unwrap_or(0);
    let mut names: HashMap<String, crate::view::Names> = HashMap::new();
    let mine_only = |o: &&Open| {
        apps.contains(&o.app) && o.answerable_by(&who.user) && (!mine || o.addressed_to(&who.user))
    };
    let total = open.iter().filter(mine_only).count();
    let shown: Vec<QuestionView> = (open.iter().filter(mine_only))
        .skip(from)
        .take(PAGE_ROWS)
        .map(|o| {
            let names = names
                .entry(o.app.clone())
                .or_insert_with(|| names_of(&c, &o.app));
            question_view(o, names, &who.user)
        })
        .collect();
    let pages = paging(&uri, from, shown.len(), total);
    c.page(
        "tasks.html",
        Some(&who),
        StatusCode::OK,
        json!({"section": "tasks", "questions": shown, "apps": c.apps, "app": app, "mine": mine,
               "total": total, "pages": pages, "notice": notice(&q)}),
    )
}

/// Where a list of `total` rows shows `shown` of them from row `from`: the range shown,
/// and the links to the pages before and after (the query kept).
fn paging(uri: &Uri, from: usize, shown: usize, total: usize) -> Value {
    let link = |at: usize| {
        let mut q: Vec<(String, String)> = query(uri)
            .into_iter()
            .filter(|(k, _)| k != "from")
            .collect();
        if at > 0 {
            q.push(("from".into(), at.to_string()));
        }
        let text: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(q.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .finish();
        format!("{}?{text}", uri.path())
    };
    json!({
        "first": if shown == 0 { 0 } else { from + 1 },
        "last": from + shown,
        "total": total,
        "previous": (from > 0).then(|| link(from.saturating_sub(PAGE_ROWS))),
        "next": (from + shown < total).then(|| link(from + shown)),
    })
}

/// A fixed notice a redirect asks for (never text from the query itself).
fn notice(q: &[(String, String)]) -> Option<&'static str> {
    match field(q, "done")? {
        "answered" => Some("Answered: the run goes on."),
        "started" => Some("Started."),
        "cancelled" => Some("Cancelled."),
        _ => None,
    }
}

// ---- answering ----

async fn answer(
    State(c): State<Arc<Console>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, form) = match c.posted(&headers, &body) {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    let key = field(&form, "key").unwrap_or_default().to_string();
    // What the page says when the answer is refused (nothing was written).
    let given = given_from(&c, &id, &key, &form).map_err(|e| e.to_string());
    let result = given.and_then(|(given, app)| {
        if !c.served_app(&app) {
            return Err(format!(
                "run `{id}` is of app `{app}`, which this console does not serve"
            ));
        }
        let request = AnswerRequest {
            control_point: key.clone(),
            given,
            decision: field(&form, "decision").map(str::to_string),
            reply: field(&form, "reply").map(str::to_string),
            by: Some(who.user.clone()),
            reason: field(&form, "reason")
                .filter(|r| !r.trim().is_empty())
                .map(str::to_string),
        };
        c.runner.answer(&id, request).map_err(|e| {
            use crate::run::answer::AnswerError;
            let help = match &e {
                crate::run::served::ServedError::Answer(a) => match a.as_ref() {
                    // Said for the web: nobody here types a name.
                    AnswerError::NotAnApprover { approvers, .. } => {
                        Some(format!("its approvers are {}", approvers.join(", ")))
                    }
                    other => crate::diag::Help::help(other),
                },
                _ => None,
            };
            match help {
                Some(h) => format!("{e} ({h})"),
                None => e.to_string(),
            }
        })
    });
    match result {
        Ok(_) => {
            tracing::info!("web console: {} answered {key} of run {id}", who.user);
            redirect(&format!("/runs/{}?done=answered", enc(&id)))
        }
        Err(why) => {
            // Nothing was written: the run's page again, saying why.
            let mut r = run_page_for(&c, &who, &id, Some(why)).await;
            *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            r
        }
    }
}

/// Why a form's answer is refused before it reaches the run (nothing was written).
#[derive(Debug, thiserror::Error)]
enum FormError {
    #[error("no run `{0}`")]
    NoRun(String),
    #[error("run `{run}` has no open question `{key}` (answered already?)")]
    NoQuestion { run: String, key: String },
    #[error("`{name}` is {what}, not {raw:?}")]
    Kind {
        name: String,
        what: &'static str,
        raw: String,
    },
}

/// The answer a form gives to question `key` of run `id`, typed as the question says
/// (its outputs' kinds; a hook's settable variables), and the run's app.
fn given_from(
    c: &Console,
    id: &str,
    key: &str,
    form: &[(String, String)],
) -> Result<(Given, String), FormError> {
    let records = read_run(c, id).ok_or_else(|| FormError::NoRun(id.to_string()))?;
    let state = FlowState::fold(records.iter());
    let question = (state.open_questions.values())
        .find(|q| q.key == key)
        .ok_or_else(|| FormError::NoQuestion {
            run: id.to_string(),
            key: key.to_string(),
        })?;
    let mut given = Given {
        flows: form
            .iter()
            .filter(|(k, _)| k == "flow")
            .map(|(_, v)| v.clone())
            .collect(),
        action: field(form, "action").map(str::to_string),
        targets: form
            .iter()
            .filter(|(k, _)| k == "target")
            .map(|(_, v)| v.clone())
            .collect(),
        ..Given::default()
    };
    match &question.offered {
        Offered::Outputs { outputs, kinds } if question.approval.is_none() => {
            let mut out = Map::new();
            for name in outputs {
                let Some(raw) = field(form, &format!("out.{name}")) else {
                    continue;
                };
                let kind = kinds.get(name).copied().unwrap_or(VarKind::Any);
                out.insert(name.clone(), typed(name, raw, kind)?);
            }
            given.outputs = Some(Value::Object(out));
        }
        Offered::Actions { settable, .. } => {
            for s in settable {
                if let Some(raw) = field(form, &format!("set.{}", s.name)).filter(|r| !r.is_empty())
                {
                    given
                        .state_updates
                        .insert(s.name.clone(), typed(&s.name, raw, s.kind)?);
                }
            }
        }
        _ => {}
    }
    Ok((given, state.app.clone()))
}

/// A field's text as a value of `kind` (the server's own check; the page checks first).
fn typed(name: &str, raw: &str, kind: VarKind) -> Result<Value, FormError> {
    let bad = |what: &'static str| FormError::Kind {
        name: name.to_string(),
        what,
        raw: raw.to_string(),
    };
    match kind {
        VarKind::String => Ok(Value::String(raw.to_string())),
        VarKind::Number => {
            let t = raw.trim();
            if let Ok(i) = t.parse::<i64>() {
                return Ok(Value::from(i));
            }
            t.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| bad("a number"))
        }
        VarKind::Boolean => match raw.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(bad("true or false")),
        },
        VarKind::List => match serde_json::from_str(raw) {
            Ok(v @ Value::Array(_)) => Ok(v),
            _ => Err(bad("a JSON list")),
        },
        VarKind::Object => match serde_json::from_str(raw) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(bad("a JSON object")),
        },
        VarKind::Any => {
            Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string())))
        }
    }
}

fn enc(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn read_run(c: &Console, id: &str) -> Option<Vec<Record>> {
    store::check_run_id(id).ok()?;
    let path = store::run_dir(c.runner.journals.base(), id).join(store::JOURNAL_FILE);
    store::read_journal(&path).ok().map(|r| r.records)
}

// ---- runs ----

async fn runs(State(c): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let who = match c.signed_in(&headers, &uri) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let q = query(&uri);
    let app = field(&q, "app")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let status = field(&q, "status")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let since = field(&q, "since")
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let since_ms = since.as_deref().and_then(|s| match s {
        "1h" => Some(3_600_000),
        "24h" => Some(86_400_000),
        "7d" => Some(7 * 86_400_000),
        _ => None,
    });
    let base = c.runner.journals.base().to_path_buf();
    let all = tokio::task::spawn_blocking(move || crate::run::listing::summaries(&base))
        .await
        .unwrap_or_default();
    let now = crate::clock::now_ms();
    let from: usize = field(&q, "from").and_then(|f| f.parse().ok()).unwrap_or(0);
    let wanted = |r: &&crate::run::listing::RunSummary| {
        c.served_app(&r.state.app)
            && app.as_ref().is_none_or(|a| a == &r.state.app)
            && status.as_ref().is_none_or(|s| s == r.status.as_str())
            && since_ms.is_none_or(|ms| now.saturating_sub(r.started_ms) <= ms)
    };
    let total = all.iter().filter(wanted).count();
    let mut rows = Vec::new();
    for r in all.iter().filter(wanted).skip(from).take(PAGE_ROWS) {
        rows.push(json!({
            "id": r.id, "app": r.state.app, "status": r.status.as_str(),
            "started": crate::view::utc_time(r.started_ms),
            "duration": crate::view::duration(r.duration_ms()),
            "steps": r.state.steps,
        }));
    }
    let statuses: Vec<&str> = [
        "waiting",
        "completed",
        "failed",
        "terminated",
        "cancelled",
        "unfinished",
    ]
    .to_vec();
    c.page(
        "runs.html",
        Some(&who),
        StatusCode::OK,
        json!({"section": "runs", "pages": paging(&uri, from, rows.len(), total), "runs": rows,
               "apps": c.apps, "app": app, "status": status,
               "statuses": statuses, "since": since, "spans": ["1h", "24h", "7d"]}),
    )
}

async fn run_page(
    State(c): State<Arc<Console>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let who = match c.signed_in(&headers, &uri) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let q = query(&uri);
    run_page_with(
        &c,
        &who,
        &id,
        None,
        notice(&q),
        field(&q, "all") == Some("1"),
    )
}

async fn run_page_for(c: &Console, who: &Session, id: &str, problem: Option<String>) -> Response {
    run_page_with(c, who, id, problem, None, false)
}

fn run_page_with(
    c: &Console,
    who: &Session,
    id: &str,
    problem: Option<String>,
    notice: Option<&str>,
    all_rows: bool,
) -> Response {
    let Some(records) = read_run(c, id) else {
        return c.error(Some(who), StatusCode::NOT_FOUND, &format!("no run `{id}`"));
    };
    let state = FlowState::fold(records.iter());
    if records.is_empty() {
        return c.error(
            Some(who),
            StatusCode::NOT_FOUND,
            &format!("run `{id}` has journalled nothing yet; reload in a moment"),
        );
    }
    if !c.served_app(&state.app) {
        return c.error(
            Some(who),
            StatusCode::NOT_FOUND,
            &format!(
                "run `{id}` is of app `{}`, which this console does not serve",
                state.app
            ),
        );
    }
    let served = c.runner.served(&state.app);
    let mut names = served
        .map(|s| crate::view::Names::from_app(&s.loaded))
        .unwrap_or_default();
    for r in &records {
        names.learn(r);
    }
    let model = served.and_then(|s| report::Model::for_run(&s.loaded, &records));
    let data = report::data(id, &records, model.as_ref(), &names);
    let rows = report::rows(&records, &names);
    let decisions = report::decisions(&rows);
    // A long journal: its last rows (the page links to all of them).
    let shown = if all_rows || rows.len() <= JOURNAL_ROWS {
        &rows[..]
    } else {
        &rows[rows.len() - JOURNAL_ROWS..]
    };
    let status = crate::run::listing::Listed::of(&state).as_str();
    let questions: Vec<QuestionView> = crate::run::pending::questions(id, &records, &state)
        .iter()
        .filter(|o| o.answerable_by(&who.user))
        .map(|o| question_view(o, &names, &who.user))
        .collect();
    let waiting = state.waiting.as_ref().map(|w| {
        let mut what: Vec<String> = (w.awaiting.iter())
            .map(|a| format!("{} `{}`", a.kind.as_str(), a.name))
            .collect();
        if let Some(due) = w.due_ms {
            what.push(format!("a timer due {}", crate::view::utc_time(due)));
        }
        if !state.open_questions.is_empty() {
            what.push(crate::diag::count(
                state.open_questions.len(),
                "open question",
            ));
        }
        if what.is_empty() {
            w.reason.clone()
        } else {
            what.join(", ")
        }
    });
    c.page(
        "run.html",
        Some(who),
        StatusCode::OK,
        json!({
            "section": "runs",
            "run": {"id": id, "app": state.app, "status": status, "message": state.message,
                    "started": crate::view::utc_time(records.first().map_or(0, |r| r.at_ms)),
                    "steps": state.steps, "waiting": waiting},
            "questions": questions,
            "decisions": decisions,
            "rows": shown,
            "hidden_rows": rows.len() - shown.len(),
            "total_rows": rows.len(),
            "cancellable": state.status.is_none(),
            "data": report::script_json(&data),
            "problem": problem,
            "notice": notice,
        }),
    )
}

async fn cancel(
    State(c): State<Arc<Console>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, form) = match c.posted(&headers, &body) {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    match read_run(&c, &id).map(|r| FlowState::fold(r.iter()).app) {
        Some(app) if c.served_app(&app) => {}
        _ => {
            return c.error(
                Some(&who),
                StatusCode::NOT_FOUND,
                &format!("no run `{id}` here"),
            );
        }
    }
    let reason = field(&form, "reason")
        .filter(|r| !r.trim().is_empty())
        .map(str::to_string);
    match c.runner.cancel_for(&id, &who.user, reason).await {
        Ok(()) => {
            tracing::info!("web console: {} cancelled run {id}", who.user);
            redirect(&format!("/runs/{}?done=cancelled", enc(&id)))
        }
        Err(e) => {
            let mut r = run_page_for(&c, &who, &id, Some(e.to_string())).await;
            *r.status_mut() = StatusCode::CONFLICT;
            r
        }
    }
}

/// `text/event-stream` of run `id`'s records from the `from`-th on: `record` events (one
/// journal row each, plain text, with the status), and `changed` once the run parks or
/// ends (the page is drawn again).
async fn live(
    State(c): State<Arc<Console>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if c.who(&headers).is_none() {
        return StatusCode::FORBIDDEN.into_response();
    }
    let Some(records) = read_run(&c, &id) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let state = FlowState::fold(records.iter());
    if !c.served_app(&state.app) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let from: usize = field(&query(&uri), "from")
        .and_then(|f| f.parse().ok())
        .unwrap_or(0);
    let mut names = names_of(&c, &state.app);
    let dir = store::run_dir(c.runner.journals.base(), &id);
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut follower = crate::run::watch::Follower::new(&dir);
        let mut seen = 0usize;
        let mut started = None;
        let mut fold = FlowState::default();
        let mut quiet = 0u32;
        loop {
            let new = match follower.next_records() {
                Ok(r) => r,
                Err(_) => break,
            };
            let mut changed = false;
            for r in &new {
                names.learn(r);
                fold.apply(r);
                let started = *started.get_or_insert(r.at_ms);
                seen += 1;
                if seen <= from {
                    continue;
                }
                let row = report::row(r, started, &names);
                let status = crate::run::listing::Listed::of(&fold).as_str();
                let data = json!({"row": row, "status": status, "steps": fold.steps});
                let event = format!("event: record\ndata: {data}\n\n");
                if tx.send(Bytes::from(event)).await.is_err() {
                    return;
                }
                changed |= matches!(
                    r.event,
                    Event::RunWaiting { .. } | Event::RunFinished { .. }
                );
            }
            if changed && seen > from {
                let _ = tx
                    .send(Bytes::from_static(b"event: changed\ndata: {}\n\n"))
                    .await;
                return;
            }
            quiet += 1;
            if quiet.is_multiple_of(60)
                && tx
                    .send(Bytes::from_static(b": still here\n\n"))
                    .await
                    .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let mut r = Response::new(Body::new(EventBody(rx)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    r
}

/// A response body fed by a channel.
struct EventBody(tokio::sync::mpsc::Receiver<Bytes>);

impl http_body::Body for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(http_body::Frame::data(b))))
    }
}

// ---- starting ----

async fn start_page_all(State(c): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let who = match c.signed_in(&headers, &uri) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let apps: Vec<Value> = (c.apps.iter())
        .map(|a| {
            let description = c
                .runner
                .served(a)
                .and_then(|s| s.loaded.config.as_ref())
                .and_then(|cfg| cfg.flow.description.as_ref().map(|d| d.value.clone()));
            json!({"name": a, "description": description})
        })
        .collect();
    c.page(
        "start.html",
        Some(&who),
        StatusCode::OK,
        json!({"section": "start", "apps": apps}),
    )
}

async fn start_page(
    State(c): State<Arc<Console>>,
    Path(app): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let who = match c.signed_in(&headers, &uri) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let scenario = field(&query(&uri), "scenario").map(str::to_string);
    start_form(&c, &who, &app, scenario.as_deref(), None, None)
}

fn start_form(
    c: &Console,
    who: &Session,
    app: &str,
    scenario: Option<&str>,
    filled: Option<&[(String, String)]>,
    problem: Option<String>,
) -> Response {
    let Some(served) = c.runner.served(app).filter(|_| c.served_app(app)) else {
        return c.error(
            Some(who),
            StatusCode::NOT_FOUND,
            &format!("no app `{app}` is served here"),
        );
    };
    let Some(config) = served.loaded.config.as_ref() else {
        return c.error(
            Some(who),
            StatusCode::NOT_FOUND,
            &format!("app `{app}` has no flow config"),
        );
    };
    let scenarios = crate::app::scenario::list(&served.loaded.dir);
    let preset: Map<String, Value> = scenario
        .filter(|s| scenarios.iter().any(|n| n == s))
        .and_then(|s| crate::app::scenario::load(&served.loaded.dir, s).ok())
        .map(|s| s.inputs)
        .unwrap_or_default();
    let variables: Vec<Value> = (config.variables.iter())
        .map(|v| {
            let name = &v.name.value;
            let kind = VarKind::of(&v.default);
            let value = match filled.and_then(|f| field(f, &format!("var.{name}"))) {
                Some(text) => text.to_string(),
                None => {
                    let value = preset.get(name).unwrap_or(&v.default);
                    match value {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    }
                }
            };
            let input = config.input(name);
            json!({
                "name": name, "kind": kind_name(kind), "described": kind.described(), "value": value,
                "required": input.is_some_and(|i| i.required),
                "description": input.and_then(|i| i.description.clone()),
            })
        })
        .collect();
    let status = if problem.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    c.page(
        "start.html",
        Some(who),
        status,
        json!({"section": "start", "app": {"name": app, "description": config.flow.description.as_ref().map(|d| d.value.clone())},
               "variables": variables, "scenarios": scenarios, "scenario": scenario,
               "problem": problem}),
    )
}

async fn start(
    State(c): State<Arc<Console>>,
    Path(app): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (who, form) = match c.posted(&headers, &body) {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    if !c.served_app(&app) {
        return c.error(
            Some(&who),
            StatusCode::NOT_FOUND,
            &format!("no app `{app}` is served here"),
        );
    }
    let given: Vec<(String, String)> = (form.iter())
        .filter_map(|(k, v)| Some((k.strip_prefix("var.")?.to_string(), v.clone())))
        .collect();
    match c.runner.start_for(&app, &given, &who.user) {
        Ok(run_id) => {
            tracing::info!("web console: {} started run {run_id} of {app}", who.user);
            // Its page reads its journal: shown once the run has journalled its start
            // (it goes on its own thread; a moment at most).
            let until = tokio::time::Instant::now() + Duration::from_secs(5);
            while read_run(&c, &run_id).is_none_or(|r| r.is_empty())
                && tokio::time::Instant::now() < until
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            redirect(&format!("/runs/{}?done=started", enc(&run_id)))
        }
        Err(e) => start_form(&c, &who, &app, None, Some(&form), Some(e.to_string())),
    }
}

// ---- assets ----

async fn asset(Path(name): Path<String>) -> Response {
    let (body, kind): (&'static str, &'static str) = match name.as_str() {
        "console.css" => (include_str!("../../assets/console/console.css"), "text/css"),
        "console.js" => (
            include_str!("../../assets/console/console.js"),
            "text/javascript",
        ),
        "bpmn-viewer.js" => (report::VIEWER_JS, "text/javascript"),
        "diagram-js.css" => (report::DIAGRAM_CSS, "text/css"),
        "bpmn-js.css" => (report::BPMN_CSS, "text/css"),
        "report.js" => (report::PAGE_JS, "text/javascript"),
        "report.css" => (report::PAGE_CSS, "text/css"),
        _ => return (StatusCode::NOT_FOUND, "not found").into_response(),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    r
}
