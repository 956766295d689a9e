//! Graph mode's stores behind one trait ([`GraphStore`]): the embedded oxigraph store
//! ([`Embedded`]: in memory; on disk with the `graph-rocksdb` feature) and any SPARQL 1.1
//! endpoint ([`Endpoint`]: SPARQL 1.1 Protocol for queries and updates, the Graph Store
//! Protocol to load a graph). Secrets (the endpoint's password) never appear in an error.

use std::sync::mpsc;
use std::time::Duration;

use oxigraph::io::RdfFormat;
use oxigraph::model::{GraphName, NamedNode, Term, Triple};
use oxigraph::sparql::results::{
    QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput,
};
use oxigraph::sparql::{QueryResults, SparqlEvaluator};

use crate::secret::Secret;

/// What a store can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("the graph store at {url} cannot be reached: {message}")]
    Unreachable { url: String, message: String },
    #[error("the graph store at {url} has no dataset `{dataset}` (HTTP 404)")]
    NoDataset { url: String, dataset: String },
    #[error("the graph store at {url} refused the credentials (HTTP {status})")]
    Unauthorized { url: String, status: u16 },
    #[error("the graph store at {url} refused the {what} (HTTP {status}): {message}")]
    Refused {
        url: String,
        what: &'static str,
        status: u16,
        message: String,
    },
    #[error("invalid SPARQL: {0}")]
    Syntax(String),
    #[error("the graph store failed: {0}")]
    Store(String),
    #[error("{0}")]
    Setup(String),
}

/// How deeply SPARQL may nest brackets: the parser recurses once per level, and a query
/// (from a person, a file, a policy) must not overflow the stack.
const MAX_NESTING: usize = 200;

/// Refuse a query or update whose `(`, `[` and `{` nest deeper than [`MAX_NESTING`]
/// (strings, IRIs and comments aside), before a parser recurses into it.
fn shallow(sparql: &str) -> Result<(), StoreError> {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = sparql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' | '\'' => {
                while let Some(n) = chars.next() {
                    if n == '\\' {
                        chars.next();
                    } else if n == c {
                        break;
                    }
                }
            }
            '<' if chars
                .peek()
                .is_some_and(|n| !n.is_whitespace() && *n != '=') =>
            {
                for c in chars.by_ref() {
                    if c == '>' || c.is_whitespace() {
                        break;
                    }
                }
            }
            _ => {}
        }
        if deepest > MAX_NESTING {
            return Err(StoreError::Syntax(format!(
                "brackets nest deeper than {MAX_NESTING} levels"
            )));
        }
    }
    Ok(())
}

/// A query's answer, whatever the store.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// SELECT: the variables (without `?`) and one row per solution.
    Solutions {
        variables: Vec<String>,
        rows: Vec<Vec<Option<Term>>>,
    },
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT, DESCRIBE.
    Graph(Vec<Triple>),
}

/// An RDF store graph mode writes into.
pub trait GraphStore: Send + Sync {
    /// Replace the named graph `graph` with the Turtle document `turtle`.
    fn put_graph(&self, graph: &str, turtle: &str) -> Result<(), StoreError>;
    /// Run a SPARQL 1.1 update.
    fn update(&self, sparql: &str) -> Result<(), StoreError>;
    /// Run a SPARQL 1.1 query. With `graphs`, over those named graphs only (their merge is
    /// the default graph, and they are the named graphs: the SPARQL Protocol's
    /// `default-graph-uri` and `named-graph-uri`); without, over the store's dataset (the
    /// embedded store's default graph is the union of its named graphs).
    fn query(&self, sparql: &str, graphs: Option<&[String]>) -> Result<Answer, StoreError>;
    /// What the store is, for messages (never a secret).
    fn describe(&self) -> String;
}

/// The embedded oxigraph store.
pub struct Embedded {
    store: oxigraph::store::Store,
    what: String,
}

impl Embedded {
    /// A fresh store in memory.
    pub fn memory() -> Result<Embedded, StoreError> {
        let store = oxigraph::store::Store::new().map_err(|e| StoreError::Store(e.to_string()))?;
        Ok(Embedded {
            store,
            what: "the embedded store (in memory)".into(),
        })
    }

    /// The store in the folder `path` (RocksDB), created when missing.
    #[cfg(feature = "graph-rocksdb")]
    pub fn open(path: &std::path::Path) -> Result<Embedded, StoreError> {
        let store = oxigraph::store::Store::open(path)
            .map_err(|e| StoreError::Store(format!("{}: {e}", path.display())))?;
        Ok(Embedded {
            store,
            what: format!("the embedded store at {}", path.display()),
        })
    }

    /// The store in the folder `path`: this build has no on-disk store.
    #[cfg(not(feature = "graph-rocksdb"))]
    pub fn open(path: &std::path::Path) -> Result<Embedded, StoreError> {
        Err(StoreError::Setup(format!(
            "the embedded store on disk ({}) needs cuga-flo built with `--features graph-rocksdb`; \
             drop `path:` to keep the store in memory",
            path.display()
        )))
    }

    /// Every quad of one named graph, as N-Quads lines (sorted), for comparisons.
    pub fn store(&self) -> &oxigraph::store::Store {
        &self.store
    }
}

fn evaluator() -> SparqlEvaluator {
    // Built without oxigraph's HTTP client: no SERVICE call leaves the process.
    SparqlEvaluator::new()
}

impl GraphStore for Embedded {
    fn put_graph(&self, graph: &str, turtle: &str) -> Result<(), StoreError> {
        let name = NamedNode::new(graph).map_err(|e| StoreError::Setup(e.to_string()))?;
        self.store
            .clear_graph(&name)
            .map_err(|e| StoreError::Store(e.to_string()))?;
        let parser = oxigraph::io::RdfParser::from_format(RdfFormat::Turtle)
            .with_default_graph(GraphName::NamedNode(name));
        self.store
            .load_from_slice(parser, turtle.as_bytes())
            .map_err(|e| StoreError::Store(e.to_string()))
    }

    fn update(&self, sparql: &str) -> Result<(), StoreError> {
        shallow(sparql)?;
        let update = evaluator()
            .parse_update(sparql)
            .map_err(|e| StoreError::Syntax(e.to_string()))?;
        update
            .on_store(&self.store)
            .execute()
            .map_err(|e| StoreError::Store(e.to_string()))
    }

    fn query(&self, sparql: &str, graphs: Option<&[String]>) -> Result<Answer, StoreError> {
        shallow(sparql)?;
        let mut query = evaluator()
            .parse_query(sparql)
            .map_err(|e| StoreError::Syntax(e.to_string()))?;
        match graphs {
            Some(graphs) => {
                let names = graphs
                    .iter()
                    .map(|g| NamedNode::new(g).map_err(|e| StoreError::Setup(e.to_string())))
                    .collect::<Result<Vec<_>, _>>()?;
                let dataset = query.dataset_mut();
                dataset.set_default_graph(names.iter().cloned().map(GraphName::from).collect());
                dataset.set_available_named_graphs(names.into_iter().map(Into::into).collect());
            }
            None => query.dataset_mut().set_default_graph_as_union(),
        }
        let results = query
            .on_store(&self.store)
            .execute()
            .map_err(|e| StoreError::Store(e.to_string()))?;
        let err = |e: oxigraph::sparql::QueryEvaluationError| StoreError::Store(e.to_string());
        Ok(match results {
            QueryResults::Boolean(b) => Answer::Boolean(b),
            QueryResults::Solutions(solutions) => {
                let variables: Vec<oxigraph::model::Variable> = solutions.variables().to_vec();
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(err)?;
                    rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
                }
                Answer::Solutions {
                    variables: variables.iter().map(|v| v.as_str().to_string()).collect(),
                    rows,
                }
            }
            QueryResults::Graph(triples) => {
                Answer::Graph(triples.collect::<Result<Vec<_>, _>>().map_err(err)?)
            }
        })
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}

/// Where an endpoint is and how to reach it.
#[derive(Debug, Clone)]
pub struct EndpointSettings {
    /// The base URL (`http://127.0.0.1:3030`).
    pub url: String,
    /// The dataset under it (`ds`: `<url>/ds/query`, `/update`, `/data`); without one the
    /// URL itself is the dataset's.
    pub dataset: Option<String>,
    pub user: Option<String>,
    pub password: Option<Secret>,
    pub timeout: Duration,
    pub connect_timeout: Duration,
}

/// Any SPARQL 1.1 endpoint. Requests go out on a thread of their own (with its own
/// runtime), so the store is called the same way from a run's observer and from a plain
/// command.
pub struct Endpoint {
    settings: EndpointSettings,
    base: String,
    jobs: std::sync::Mutex<mpsc::Sender<Job>>,
}

type Job = (Request, mpsc::Sender<Result<(u16, String), String>>);

struct Request {
    url: String,
    method: reqwest::Method,
    content_type: &'static str,
    accept: &'static str,
    body: String,
}

impl Endpoint {
    pub fn new(settings: EndpointSettings) -> Result<Endpoint, StoreError> {
        crate::tls::install_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .build()
            .map_err(|e| StoreError::Setup(format!("cannot build an HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Setup(format!("cannot start the HTTP runtime: {e}")))?;
        let (tx, rx) = mpsc::channel::<Job>();
        let user = settings.user.clone();
        let password = settings.password.clone();
        std::thread::Builder::new()
            .name("graph-endpoint".into())
            .spawn(move || {
                while let Ok((request, reply)) = rx.recv() {
                    let mut builder = client
                        .request(request.method, &request.url)
                        .header("content-type", request.content_type)
                        .header("accept", request.accept)
                        .body(request.body);
                    if let Some(user) = &user {
                        builder = builder.basic_auth(user, password.as_ref().map(|p| p.expose()));
                    }
                    let answer = runtime.block_on(async {
                        let response = builder.send().await.map_err(|e| {
                            let mut text = e.to_string();
                            let mut source = std::error::Error::source(&e);
                            while let Some(s) = source {
                                text = format!("{text}: {s}");
                                source = s.source();
                            }
                            text
                        })?;
                        let status = response.status().as_u16();
                        let body = response.text().await.map_err(|e| e.to_string())?;
                        Ok((status, body))
                    });
                    let _ = reply.send(answer);
                }
            })
            .map_err(|e| StoreError::Setup(format!("cannot start the HTTP thread: {e}")))?;
        let trimmed = settings.url.trim_end_matches('/');
        let base = match &settings.dataset {
            Some(d) => format!("{trimmed}/{}", d.trim_matches('/')),
            None => trimmed.to_string(),
        };
        Ok(Endpoint {
            settings,
            base,
            jobs: std::sync::Mutex::new(tx),
        })
    }

    /// The URL shown in messages: no user or password.
    fn shown(&self) -> String {
        crate::secret::without_userinfo(&self.base)
    }

    fn send(&self, what: &'static str, request: Request) -> Result<String, StoreError> {
        let (tx, rx) = mpsc::channel();
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((request, tx));
        let url = self.shown();
        let redact = |text: String| match &self.settings.password {
            Some(p) => crate::secret::redact_urls(&p.redact(&text)),
            None => crate::secret::redact_urls(&text),
        };
        let answer = sent
            .ok()
            .and_then(|()| rx.recv().ok())
            .unwrap_or_else(|| Err("the HTTP thread stopped".into()));
        let (status, body) = answer.map_err(|message| StoreError::Unreachable {
            url: url.clone(),
            message: redact(message),
        })?;
        match status {
            200..=299 => Ok(body),
            401 | 403 => Err(StoreError::Unauthorized { url, status }),
            404 if self.settings.dataset.is_some() => Err(StoreError::NoDataset {
                url: crate::secret::without_userinfo(&self.settings.url),
                dataset: self.settings.dataset.clone().unwrap_or_default(),
            }),
            _ => {
                let mut message: String = body.trim().chars().take(300).collect();
                if message.is_empty() {
                    message = "no message".into();
                }
                Err(StoreError::Refused {
                    url,
                    what,
                    status,
                    message: redact(message),
                })
            }
        }
    }
}

impl GraphStore for Endpoint {
    fn put_graph(&self, graph: &str, turtle: &str) -> Result<(), StoreError> {
        let url =
            reqwest::Url::parse_with_params(&format!("{}/data", self.base), [("graph", graph)])
                .map_err(|e| StoreError::Setup(format!("{}: {e}", self.shown())))?;
        self.send(
            "graph upload",
            Request {
                url: url.to_string(),
                method: reqwest::Method::PUT,
                content_type: "text/turtle; charset=utf-8",
                accept: "*/*",
                body: turtle.to_string(),
            },
        )
        .map(|_| ())
    }

    fn update(&self, sparql: &str) -> Result<(), StoreError> {
        self.send(
            "update",
            Request {
                url: format!("{}/update", self.base),
                method: reqwest::Method::POST,
                content_type: "application/sparql-update; charset=utf-8",
                accept: "*/*",
                body: sparql.to_string(),
            },
        )
        .map(|_| ())
    }

    fn query(&self, sparql: &str, graphs: Option<&[String]>) -> Result<Answer, StoreError> {
        shallow(sparql)?;
        // Parsed here first: what kind of answer to ask for, and a clear syntax error.
        let parsed = spargebra::SparqlParser::new()
            .parse_query(sparql)
            .map_err(|e| StoreError::Syntax(e.to_string()))?;
        let graph = matches!(
            parsed,
            spargebra::Query::Construct { .. } | spargebra::Query::Describe { .. }
        );
        let body = self.send(
            "query",
            Request {
                url: {
                    let params = graphs.unwrap_or_default().iter().flat_map(|g| {
                        [
                            ("default-graph-uri", g.as_str()),
                            ("named-graph-uri", g.as_str()),
                        ]
                    });
                    reqwest::Url::parse_with_params(&format!("{}/query", self.base), params)
                        .map_err(|e| StoreError::Setup(format!("{}: {e}", self.shown())))?
                        .to_string()
                },
                method: reqwest::Method::POST,
                content_type: "application/sparql-query; charset=utf-8",
                accept: if graph {
                    "application/n-triples"
                } else {
                    "application/sparql-results+json"
                },
                body: sparql.to_string(),
            },
        )?;
        let bad =
            |e: String| StoreError::Store(format!("{}: unreadable answer: {e}", self.shown()));
        if graph {
            let triples = oxigraph::io::RdfParser::from_format(RdfFormat::NTriples)
                .for_slice(body.as_bytes())
                .map(|q| q.map(Triple::from).map_err(|e| bad(e.to_string())))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Answer::Graph(triples));
        }
        match QueryResultsParser::from_format(QueryResultsFormat::Json)
            .for_slice(body.as_bytes())
            .map_err(|e| bad(e.to_string()))?
        {
            SliceQueryResultsParserOutput::Boolean(b) => Ok(Answer::Boolean(b)),
            SliceQueryResultsParserOutput::Solutions(solutions) => {
                let variables: Vec<oxigraph::model::Variable> = solutions.variables().to_vec();
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(|e| bad(e.to_string()))?;
                    rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
                }
                Ok(Answer::Solutions {
                    variables: variables.iter().map(|v| v.as_str().to_string()).collect(),
                    rows,
                })
            }
        }
    }

    fn describe(&self) -> String {
        format!("the SPARQL endpoint {}", self.shown())
    }
}

/// Open the store a flow config's `graph:` block names (`dir`: the config's folder, for a
/// relative `path:`). The endpoint's user and password are read from the environment.
pub fn open(
    config: &crate::app::GraphConfig,
    dir: &std::path::Path,
) -> Result<std::sync::Arc<dyn GraphStore>, StoreError> {
    use crate::app::GraphBackend;
    match config.store {
        GraphBackend::Embedded => Ok(std::sync::Arc::new(match &config.path {
            Some(p) => Embedded::open(&dir.join(&p.value))?,
            None => Embedded::memory()?,
        })),
        GraphBackend::Endpoint => {
            let url = config
                .endpoint
                .as_ref()
                .map(|u| u.value.clone())
                .ok_or_else(|| StoreError::Setup("`graph` has no `endpoint:` URL".into()))?;
            let env = |key: &Option<crate::app::Located<String>>, what: &str| match key {
                None => Ok(None),
                Some(var) => std::env::var(&var.value).map(Some).map_err(|_| {
                    StoreError::Setup(format!(
                        "the environment variable `{}` ({what} of the graph endpoint) is not set",
                        var.value
                    ))
                }),
            };
            let user = env(&config.user_env, "`user_env`, the user")?;
            let password = env(&config.password_env, "`password_env`, the password")?;
            let timeout =
                Duration::from_secs_f64(config.timeout.as_ref().map_or(30.0, |t| t.value));
            Ok(std::sync::Arc::new(Endpoint::new(EndpointSettings {
                url,
                dataset: config.dataset.as_ref().map(|d| d.value.clone()),
                // A password alone goes with an empty user (basic auth).
                user: user.or_else(|| password.as_ref().map(|_| String::new())),
                password: password.map(Secret::new),
                timeout,
                connect_timeout: timeout.min(Duration::from_secs(10)),
            })?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_nested_past_the_limit_is_refused_before_any_parser_recurses() {
        let deep = format!("SELECT * WHERE {}{}", "{".repeat(5000), "}".repeat(5000));
        let Err(StoreError::Syntax(why)) = shallow(&deep) else {
            panic!("accepted");
        };
        assert!(why.contains("nest deeper"), "{why}");
        // Brackets in strings, IRIs and comments do not count.
        let quoted = format!(
            "SELECT * WHERE {{ ?s ?p \"{}\" . ?s <http://x/{}> ?o }} # {}",
            "(".repeat(500),
            "[".repeat(300),
            "{".repeat(500)
        );
        assert!(shallow(&quoted).is_ok());
        assert!(shallow("SELECT * WHERE { ?s ?p ?o FILTER(?o < 3) }").is_ok());
    }
}
