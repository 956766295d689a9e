//! A new app from a template embedded in the binary (`cuga-flo init`): a folder that
//! validates and whose scenarios pass. The app's name is substituted for `{{app}}` (and a
//! title made of it for `{{title}}`) in every file; the files are written into a
//! temporary folder beside the target that is renamed into place last: either the whole
//! app appears or nothing does.

use std::io;
use std::path::{Path, PathBuf};

/// The templates `init` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Template {
    /// A task agent, a hook that screens its answer by rule, and a gateway with a
    /// deterministic condition and a default flow
    Approval,
    /// A task agent, then a gateway reasoned by rules and a model, with three branches
    Triage,
    /// Start, one task agent, end
    Blank,
}

impl Template {
    pub const ALL: [Template; 3] = [Template::Approval, Template::Triage, Template::Blank];

    pub fn name(self) -> &'static str {
        match self {
            Template::Approval => "approval",
            Template::Triage => "triage",
            Template::Blank => "blank",
        }
    }

    /// The template's files: (path in the app, with `{app}` for the app's name; text).
    fn files(self) -> &'static [(&'static str, &'static str)] {
        macro_rules! t {
            ($dir:literal, $($path:literal => $file:literal),* $(,)?) => {
                &[$(($path, include_str!(concat!("templates/", $dir, "/", $file)))),*]
            };
        }
        match self {
            Template::Approval => t!("approval",
                "config/{app}_config.yaml" => "config.yaml",
                "config/{app}.bpmn" => "model.bpmn",
                "policies/task-assess.md" => "policies/task-assess.md",
                "policies/task-review.md" => "policies/task-review.md",
                "policies/hook-screen.md" => "policies/hook-screen.md",
                "scenarios/auto_approved.yaml" => "scenarios/auto_approved.yaml",
                "scenarios/reviewed.yaml" => "scenarios/reviewed.yaml",
                "scenarios/blocked.yaml" => "scenarios/blocked.yaml",
            ),
            Template::Triage => t!("triage",
                "config/{app}_config.yaml" => "config.yaml",
                "config/{app}.bpmn" => "model.bpmn",
                "policies/task-classify.md" => "policies/task-classify.md",
                "policies/task-handle.md" => "policies/task-handle.md",
                "policies/decision-route.md" => "policies/decision-route.md",
                "scenarios/billing.yaml" => "scenarios/billing.yaml",
                "scenarios/outage.yaml" => "scenarios/outage.yaml",
                "scenarios/reasoned.yaml" => "scenarios/reasoned.yaml",
            ),
            Template::Blank => t!("blank",
                "config/{app}_config.yaml" => "config.yaml",
                "config/{app}.bpmn" => "model.bpmn",
                "policies/task-work.md" => "policies/task-work.md",
                "scenarios/done.yaml" => "scenarios/done.yaml",
            ),
        }
    }
}

const README: &str = include_str!("templates/README.md");

/// Why a name cannot be an app's name.
pub fn bad_name(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Some("the name is empty".into());
    };
    if !first.is_ascii_alphabetic() {
        return Some(format!("`{name}` does not start with a letter"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Some(format!(
            "`{name}` holds `{}`: an app's name is letters, digits, `_` and `-`",
            c.escape_default()
        ));
    }
    if name.len() > 64 {
        return Some(format!("`{name}` is longer than 64 characters"));
    }
    None
}

/// The files of `template` for the app `name`: (path in the app folder, text).
pub fn render(template: Template, name: &str) -> Vec<(PathBuf, String)> {
    let title = title_of(name);
    let fill = |text: &str| text.replace("{{app}}", name).replace("{{title}}", &title);
    let mut files: Vec<(PathBuf, String)> = template
        .files()
        .iter()
        .map(|(path, text)| (PathBuf::from(path.replace("{app}", name)), fill(text)))
        .collect();
    files.push((
        PathBuf::from("README.md"),
        fill(README).replace("{{template}}", template.name()),
    ));
    files
}

/// `loan_approval` → `Loan approval`.
fn title_of(name: &str) -> String {
    let words = name.replace(['_', '-'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
        None => name.to_string(),
    }
}

/// Write `files` as the folder `target`: into a fresh temporary folder beside it, renamed
/// into place at the end. Fails, writing nothing, when `target` exists.
pub fn write_app(target: &Path, files: &[(PathBuf, String)]) -> io::Result<()> {
    let parent = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    if std::fs::symlink_metadata(target).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", target.display()),
        ));
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The app is built one level down in the temporary folder, so that an interrupted
    // `init` never leaves a folder that looks like an app (one with a `config/`) behind.
    let temp = parent.join(format!(".cuga-flo-init-{}-{name}", std::process::id()));
    let written = (|| {
        std::fs::create_dir(&temp)?;
        let app = temp.join(&name);
        for (path, text) in files {
            let path = app.join(path);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)?;
        }
        // Checked again just before the rename: a folder made meanwhile is not replaced
        // (renaming onto an empty folder would succeed).
        if std::fs::symlink_metadata(target).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists", target.display()),
            ));
        }
        std::fs::rename(&app, target)
    })();
    let _ = std::fs::remove_dir_all(&temp);
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_titles_and_placeholders() {
        assert_eq!(bad_name("expense_approval"), None);
        assert_eq!(bad_name("A-1"), None);
        for bad in ["", "1a", "_a", "a b", "a/b", "a.b", "ä", "a\u{0}"] {
            assert!(bad_name(bad).is_some(), "{bad:?}");
        }
        assert!(bad_name(&"a".repeat(65)).is_some());
        assert_eq!(title_of("loan_approval"), "Loan approval");
        assert_eq!(title_of("x-ray"), "X ray");
        for t in Template::ALL {
            let files = render(t, "shop");
            assert!(files.iter().all(|(p, text)| !p.display().to_string().contains('{')
                && !text.contains("{{")));
            assert!(
                files
                    .iter()
                    .any(|(p, _)| p == Path::new("config/shop_config.yaml"))
            );
            assert!(
                files
                    .iter()
                    .any(|(p, _)| p == Path::new("config/shop.bpmn"))
            );
        }
    }

    #[test]
    fn an_app_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let files = render(Template::Blank, "a");
        let target = dir.path().join("apps/a");
        write_app(&target, &files).unwrap();
        assert!(target.join("config/a_config.yaml").is_file());
        // a second time: refused, the first one untouched, no temporary folder left
        let err = write_app(&target, &render(Template::Triage, "a")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(!target.join("policies/decision-route.md").exists());
        let left: Vec<_> = std::fs::read_dir(dir.path().join("apps"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["a"]);
        // a file cannot be written (a path under it is a file): nothing is left
        let blocked = vec![
            (PathBuf::from("config/x.yaml"), "x".to_string()),
            (PathBuf::from("config/x.yaml/y"), "y".to_string()),
        ];
        assert!(write_app(&dir.path().join("apps/b"), &blocked).is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path().join("apps"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["a"]);
    }
}
