# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_cuga_flo_global_optspecs
    string join \n apps-dir= color= v/verbose q/quiet store= h/help V/version
end

function __fish_cuga_flo_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_cuga_flo_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_cuga_flo_using_subcommand
    set -l cmd (__fish_cuga_flo_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -s V -l version -d 'Print version'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "init" -d 'Create a new app from a template: model with diagram, config, policies, scenarios'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "list" -d 'List the apps and whether each validates'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "validate" -d 'Check apps or BPMN models for every mistake that can be found before a run'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "describe" -d 'What a person sees before a run: each control point, who decides there, who answers'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "graph" -d 'Draw an app\'s or a model\'s flow (mermaid, dot, a listing); export it as RDF, import an RDF graph as an app'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "start" -d 'Run a process: every control-point decision and the hook audit log, live'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "test" -d 'Run apps\' scenarios and check their expectations (for CI: --junit FILE)'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "runs" -d 'The journalled runs: list, show, replay, verify, export'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "serve" -d 'Serve apps: MCP over streamable HTTP or stdio, A2A agents, the web console'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "users" -d 'The people who may sign in to the web console (serve --ui): add, remove, list'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "tools" -d 'The tools an app\'s tool sources offer (MCP servers, OpenAPI), and who confirms each; --lock writes tools.lock.json for validate'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "kogito" -d 'Kogito (Apache KIE): generate and build an app\'s service'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "worker" -d 'Resume waiting runs as their timers come due (and answered ones), until stopped'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "store" -d 'The run store a database keeps (--store postgres://…): migrate its schema, its status'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "schema" -d 'Print the JSON Schema of a flow config, a scenario or an answers file (for editors)'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "man" -d 'Print the man page (roff), or write every page into a folder (--dir)'
complete -c cuga-flo -n "__fish_cuga_flo_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -l template -d 'What the new app starts from' -r -f -a "approval\t'A task agent, a hook that screens its answer by rule, and a gateway with a deterministic condition and a default flow'
triage\t'A task agent, then a gateway reasoned by rules and a model, with three branches'
blank\t'Start, one task agent, end'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -l json -d 'The apps as one JSON array (with each one\'s description and scenarios)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l all -d 'Validate every app under the apps folder'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l strict -d 'Treat warnings as errors'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -l json -d 'Print one JSON document instead of human-readable diagnostics'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -l json -d 'Print one JSON document instead of the human description'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand describe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -l format -d 'The output format' -r -f -a "mermaid\t'A Mermaid flowchart (renders in GitHub markdown)'
dot\t'A Graphviz digraph (`dot -Tsvg`)'
ascii\t'An indented listing of the flow, branch by branch'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -a "export" -d 'Write an app\'s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on `agentflow:nextTask` edges), with its flow config and policies'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -a "import" -d 'Make a runnable app (BPMN, flow config, policies) from an RDF graph: Turtle, TriG (.trig) or N-Quads (.nq)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -a "query" -d 'Run a SPARQL query against graph mode\'s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -a "validate" -d 'Validate a process graph with SHACL against cuga-flo\'s process shapes: an app\'s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and not __fish_seen_subcommand_from export import query validate help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -l format -d 'The serialisation' -r -f -a "turtle\t'Turtle with RDF 1.2 `{| |}` annotations (read by RDF 1.2 and RDF-star tools)'
trig\t'TriG: the same, in a named graph'
nquads\t'N-Quads: annotations as reifiers with triple terms (RDF 1.2 readers only)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -l annotations -d 'How the annotations on conditional edges are written: RDF 1.2 annotations (`{| |}`), or standard RDF reification (`rdf:Statement` nodes) for RDF 1.1 readers such as rdflib' -r -f -a "star\t'RDF 1.2 annotations (RDF 1.2 and RDF-star readers: oxigraph, Jena)'
reified\t'Standard RDF reification: `rdf:Statement` nodes (any RDF reader)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -s o -l output -d 'Write to FILE instead of stdout' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -s o -l output -d 'The app folder to create (its name is the app\'s name)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -l recipes -d 'A folder of Goose recipes (`<name>.yaml`) an AgentFLOW graph\'s tasks name, looked in before `recipes/` beside the graph and in the folders above it' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -l force -d 'Replace the folder if it exists'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -l json -d 'SPARQL 1.1 JSON results instead of a table'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from query" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l report -d 'Print the SHACL validation report (Turtle) instead of diagnostics'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l json -d 'Print the results as JSON'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l data-graph -d 'Print the data graph that is validated (N-Triples: annotations as RDF reification), for another SHACL processor'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -l shapes -d 'Print the shapes (Turtle) and exit'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write an app\'s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on `agentflow:nextTask` edges), with its flow config and policies'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from help" -f -a "import" -d 'Make a runnable app (BPMN, flow config, policies) from an RDF graph: Turtle, TriG (.trig) or N-Quads (.nq)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from help" -f -a "query" -d 'Run a SPARQL query against graph mode\'s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from help" -f -a "validate" -d 'Validate a process graph with SHACL against cuga-flo\'s process shapes: an app\'s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand graph; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l scenario -d 'Run `applications/<app>/scenarios/<NAME>.yaml`: its inputs and answers, then check its expectations' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l answers -d 'Answers for control points, by id (YAML: `answers: {<id>: ...}`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l record -d 'Record every answer given (scenario, answers file, person) to FILE, as a cassette that `--replay` (or `--answers`) reads' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l replay -d 'Answer only from a recorded cassette (after the policy rules), refusing an answer whose context drifted since recording; pass the inputs with --input / --var' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l var -d 'Set a process variable (typed by its declared default); repeatable' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l input -d 'Initial variables from a JSON object in a file, or `-` for stdin' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l engine -d 'Run on this engine instead of the config\'s' -r -f -a "native\t''
flowable\t''
kogito\t''
mcp\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l engine-url -d 'The engine\'s URL instead of the config\'s `workflow_engine.url`: an MCP engine\'s endpoint, Flowable\'s REST API or a Kogito service (alone: the config\'s engine when it is reached by URL, else an MCP engine)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l step-budget -d 'Node entries allowed before the run fails (bounds loops); at least 1' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l by -d 'Who answers at the terminal (default: $USER); at a guardrail with approvers, only an approver is asked there' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l bridge -d 'How the native engine reaches the control points: directly (the bridge contract in-process), or through the in-process MCP bridge (as an external engine would)' -r -f -a "direct\t'The engine calls the harness in-process, through the bridge\'s Rust contract'
mcp\t'The engine calls the harness\'s MCP tools over an in-process MCP connection'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run (exit 3) until `cuga-flo runs resume --due` or `cuga-flo worker` [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l json -d 'Stream one JSON event per line instead of the human view'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l no-model -d 'Never call a model, even when the app configures one (answers come from the policy rules, the scenario or answers file, or a person)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l no-prompt -d 'Never ask at the terminal: a question for a person parks the run (exit 3) for `cuga-flo runs answer` (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -l no-park -d 'A question nobody can answer fails the run instead of parking it'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand start" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l junit -d 'Also write the results as JUnit XML to FILE' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l engine -d 'Run every scenario on this engine instead of its app\'s' -r -f -a "native\t''
flowable\t''
kogito\t''
mcp\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -s j -l jobs -d 'How many scenarios run at once [default: the number of cores]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l json -d 'One JSON object per scenario, then a summary object (JSON lines)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l model -d 'Let the apps\' models answer what a scenario leaves open (by default a scenario runs without a model: its answers and the policy rules decide)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l update -d 'Rewrite the `expect:` of each scenario whose run did not meet it from what the run did (its status, its path, the values of the variables it names; `visits` and `never_visits` are kept), and show what changed'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -l keep -d 'Keep the scenarios\' runs (their journals, under `<run-dir>/test-runs/<id>/`) for reading with `runs … --run-dir`; by default they are deleted at the end'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "list" -d 'List the journalled runs, newest first'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "prune" -d 'Delete old runs: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "show" -d 'Print a journalled run as `start` streamed it'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "watch" -d 'Follow a run from another terminal as `start` streams it (a live or a waiting run, until it ends), and exit as it ended: 0 completed, 1 failed, terminated or cancelled'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "replay" -d 'Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "resume" -d 'Continue a run from its journal: after a crash, an interruption, or once it parked (--due: every waiting run whose timer is due)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "pending" -d 'The questions (and messages and signals) waiting runs wait for'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "answer" -d 'Answer an open question (checked as a live answer), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "cancel" -d 'Cancel a waiting run (or one a crash left behind): it ends `cancelled`, its remote tasks cancelled at their agents (a run live in another process is refused)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "message" -d 'Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "signal" -d 'Deliver a signal to every run waiting for it, and resume each'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "verify" -d 'Check a run\'s journal against its hash chain and head file (exit 1 when it was tampered with)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "export" -d 'Write a run\'s journal as JSON lines (the audit trail) or as an XES event log'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "report" -d 'Write one self-contained HTML page of a run: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and not __fish_seen_subcommand_from list prune show watch replay resume pending answer cancel message signal verify export report help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l app -d 'Only the runs of this app' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l status -d 'Only the runs with this status' -r -f -a "completed\t''
terminated\t''
failed\t''
waiting\t'waiting for an answer, a message or a timer'
cancelled\t'Cancelled with `runs cancel`'
unfinished\t'Stopped without an end (a crash): `runs resume` continues it'
empty\t'Stopped before its first record was written: it never started'
unreadable\t'The journal cannot be read'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l limit -d 'At most N runs (the newest)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -l json -d 'The runs as one JSON array'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l older-than -d 'Only runs whose last record is older than this (90s, 12h, 7d, 2w)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l status -d 'Only runs with this status (repeatable)' -r -f -a "completed\t''
terminated\t''
failed\t''
waiting\t'waiting for an answer, a message or a timer'
cancelled\t'Cancelled with `runs cancel`'
unfinished\t'Stopped without an end (a crash): `runs resume` continues it'
empty\t'Stopped before its first record was written: it never started'
unreadable\t'The journal cannot be read'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l app -d 'Only the runs of this app' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l include-waiting -d 'Waiting and unfinished runs too (they still have work to do: a question, a timer, a crash to resume from)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l yes -d 'Delete them (without it, only say what would be deleted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -l json -d 'What was (or would be) deleted, as one JSON object'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l allow-tampered -d 'Read the run even when its journal fails `runs verify` (a warning says what is wrong)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -l json -d 'The run as one JSON document: its state (the journal folded: path, decisions, variables, the untrusted ones and where each came from), its summary and its records'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -l interval -d 'How often the journal is read for new records, in milliseconds' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l app -d 'The app, when the run\'s app is not found by its name under the apps folder' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l allow-tampered -d 'Read the run even when its journal fails `runs verify` (a warning says what is wrong)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l concurrency -d 'With --due: resume up to N due runs at once, as `worker` does [default: the number of cores]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l app -d 'The app, when the run\'s app folder has moved' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run again [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l engine-url -d 'A run on Flowable or Kogito: the engine\'s URL, when it is no longer where the run started' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l due -d 'Resume every waiting run whose timer is due (for cron)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l no-model -d 'Never call a model while resuming'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l no-prompt -d 'Never ask at the terminal: questions park again (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l app -d 'Only the runs of this app' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -l json -d 'One JSON document: every open question'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from pending" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l flow -d 'A gateway: the flow to take (repeat for an inclusive gateway)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l action -d 'A hook: the action' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l target -d 'A hook: the action\'s target (twice for swap_nodes; the task for add_node)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l outputs -d 'A task: its outputs, a JSON object' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l error -d 'A task: raise this BPMN error instead of answering outputs (an error boundary event on the task catches it)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l message -d 'With --error: what the error says' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l choice -d 'The N-th offered flow or action, as `runs pending` numbers them' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l set -d 'A hook: set a process variable with the action (repeatable)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l reason -d 'Why (journalled with the answer)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l by -d 'Who answers (default: $USER)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l reply -d 'A question a consulted remote person asked back (`input-required`): the reply, sent to them in the same A2A task' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l app -d 'The app, when the run\'s app folder has moved' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run again [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l engine-url -d 'A run on Flowable or Kogito: the engine\'s URL, when it is no longer where the run started' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l no-resume -d 'Only record the answer; `runs resume` applies it later'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l no-model -d 'Never call a model while resuming'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l no-prompt -d 'Never ask at the terminal: questions park again (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from answer" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l reason -d 'Why (journalled with the cancellation)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l by -d 'Who cancels (default: $USER)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l app -d 'The app, when the run\'s app folder has moved (its remote agents are read from it)' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -l json -d 'Print the cancellation as one JSON object'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from cancel" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l correlate -d 'Find the run by a variable\'s value instead of its id (exactly one waiting run must hold it)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l key -d 'The message\'s correlation key value (the model\'s, e.g. Camunda 8\'s `<zeebe:subscription correlationKey>`): with the message\'s name alone, every waiting run with a wait for it under that key receives it; with a run id, only that run\'s wait under that key' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l var -d 'A variable the message sets in the run (repeatable; VALUE: JSON, else a string)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l app -d 'The app, when the run\'s app folder has moved' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run again [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l engine-url -d 'A run on Flowable or Kogito: the engine\'s URL, when it is no longer where the run started' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l no-resume -d 'Only record the delivery; `runs resume` (or the worker) applies it later'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l no-model -d 'Never call a model while resuming'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l no-prompt -d 'Never ask at the terminal: questions park again (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from message" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l var -d 'A variable the signal sets in each run (repeatable; VALUE: JSON, else a string)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l app -d 'The app, when the run\'s app folder has moved' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run again [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l engine-url -d 'A run on Flowable or Kogito: the engine\'s URL, when it is no longer where the run started' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l no-resume -d 'Only record the deliveries; `runs resume` (or the worker) applies them later'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l no-model -d 'Never call a model while resuming'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l no-prompt -d 'Never ask at the terminal: questions park again (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from signal" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -l json -d 'The report as one JSON object'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l format -r -f -a "jsonl\t'The journal\'s records, one JSON object per line, with their hash chain'
xes\t'An IEEE 1849 XES 1.0 event log (one trace, one event per activity)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -s o -l output -d 'Write to this file instead of stdout' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -l allow-tampered -d 'Read the run even when its journal fails `runs verify` (a warning says what is wrong)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -s o -l output -d 'Where to write the page (standard output when not given and it is not a terminal)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l app -d 'The app, when the run\'s app is not found by its name under the apps folder' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -l allow-tampered -d 'Read the run even when its journal fails `runs verify` (a warning says what is wrong)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the journalled runs, newest first'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "prune" -d 'Delete old runs: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print a journalled run as `start` streamed it'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "watch" -d 'Follow a run from another terminal as `start` streams it (a live or a waiting run, until it ends), and exit as it ended: 0 completed, 1 failed, terminated or cancelled'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "replay" -d 'Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "resume" -d 'Continue a run from its journal: after a crash, an interruption, or once it parked (--due: every waiting run whose timer is due)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "pending" -d 'The questions (and messages and signals) waiting runs wait for'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "answer" -d 'Answer an open question (checked as a live answer), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "cancel" -d 'Cancel a waiting run (or one a crash left behind): it ends `cancelled`, its remote tasks cancelled at their agents (a run live in another process is refused)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "message" -d 'Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "signal" -d 'Deliver a signal to every run waiting for it, and resume each'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check a run\'s journal against its hash chain and head file (exit 1 when it was tampered with)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write a run\'s journal as JSON lines (the audit trail) or as an XES event log'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "report" -d 'Write one self-contained HTML page of a run: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l http -d 'Serve MCP over streamable HTTP at http://HOST:PORT/mcp (port 0: any free port); prints `listening http://HOST:PORT/mcp` on stdout once ready' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l a2a -d 'Serve each app as an A2A 1.0 agent at http://HOST:PORT/<app> (its card at <app>/.well-known/agent-card.json; port 0: any free port); prints `listening http://HOST:PORT` and one `agent <app> <url>` line per app on stdout once ready' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l ui -d 'Serve the web console (tasklist, runs, start) at http://HOST:PORT, alone or beside --a2a or --http on the same run host (beside --http, a question nobody answers parks its run for the console\'s people); prints `listening http://HOST:PORT` (beside the others, `console http://HOST:PORT` after their lines) once ready' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l users -d 'The console\'s users file (`cuga-flo users add`) [default: <run-dir>/users, when it exists]; without one (nor --user-header), only a loopback address is served, to the local user' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l user-header -d 'A trusted reverse proxy signs people in and names them in this request header (e.g. X-Forwarded-User); the console must then be reachable through the proxy only' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l token-env -d 'Require `Authorization: Bearer <token>`, the token read from this environment variable (needed to bind to anything but a loopback address)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l token-file -d 'Require `Authorization: Bearer <token>`, the token read from this file (its first line)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l metrics -d 'Serve the process\'s metrics (runs, control points, model and tool calls, journal commits) in Prometheus\'s text format at http://HOST:PORT/metrics (port 0: any free port), behind the bearer token when one is given; prints `metrics URL` with the listening lines' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l read-timeout -d 'Seconds a client has to send a request\'s head and body; also how long a connection may idle between requests before it is closed (HTTP, A2A)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l max-sessions -d 'MCP sessions open at once; a new session beyond gets HTTP 503 (HTTP); A2A: tasks going at once (a new task beyond is refused)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l session-idle -d 'Seconds an MCP session may go unused before it is closed (HTTP); A2A: how long a task waits for the caller\'s answer when input-required (then it fails), and how long an ended task can still be read' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l answers -d 'Answers for control points, by id (YAML: `answers: {<id>: ...}`), asked after the policy rules and before the app\'s model' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l bridge -d 'How the runs that clients start with `run_process` reach the control points: directly (the bridge contract in-process), or back through the in-process MCP bridge, as an engine in another process would' -r -f -a "direct\t'The engine calls the harness in-process, through the bridge\'s Rust contract'
mcp\t'The engine calls the harness\'s MCP tools over an in-process MCP connection'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a run whose timer is due later parks, held by the server, which resumes it when the timer is due [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l all -d 'Serve every app under the apps folder (those that do not validate are reported and left out)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l stdio -d 'Serve MCP over stdin and stdout (logs go to stderr; nothing else to stdout)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -l no-model -d 'Never call a model, even when an app configures one'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -f -a "add" -d 'Add a person (or set a new password): asked at the terminal without echo, or read from standard input\'s first line (--password-stdin)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -f -a "remove" -d 'Remove a person'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -f -a "list" -d 'List the people who may sign in'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and not __fish_seen_subcommand_from add remove list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l users -d 'The users file [default: <run-dir>/users]' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -l password-stdin -d 'Read the password from standard input\'s first line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -l users -d 'The users file [default: <run-dir>/users]' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -l users -d 'The users file [default: <run-dir>/users]' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a person (or set a new password): asked at the terminal without echo, or read from standard input\'s first line (--password-stdin)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a person'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the people who may sign in'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -l lock -d 'Write `tools.lock.json` beside the flow config (what `validate` checks against)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -l json -d 'One JSON document: each source with its tools, or why it cannot be reached'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand tools" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -f -a "build" -d 'Generate the app\'s Kogito service (a Quarkus project) and build it with Maven'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and not __fish_seen_subcommand_from build help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -s o -l output -d 'Where the project goes (default: .cuga-flo/kogito/<app>)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l port -d 'The service\'s port (default: the port of the config\'s `workflow_engine.url`, else 8081)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l persistence -d 'Where the service keeps its process instances: `memory` (a restart forgets them) or `postgresql` (Kogito\'s JDBC persistence; the database from QUARKUS_DATASOURCE_JDBC_URL, _USERNAME, _PASSWORD when the service starts)' -r -f -a "memory\t''
postgresql\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -l no-build -d 'Write the project only; do not run Maven'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from build" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from help" -f -a "build" -d 'Generate the app\'s Kogito service (a Quarkus project) and build it with Maven'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand kogito; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l interval -d 'Seconds between two looks for due runs' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l graph-poll -d 'Also look this often (`30s`, `2m`, `500ms`; a bare number is seconds) into the graph of each run parked at a guardrail, on an endpoint or the embedded store on disk, and resume it as soon as an approver\'s decision is there' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l concurrency -d 'Resume up to N due runs at once [default: the number of cores]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l metrics -d 'Serve the worker\'s metrics (its queue, how late due runs are, the runs it resumes) in Prometheus\'s text format at http://HOST:PORT/metrics (a loopback address; port 0: any free port); prints `metrics URL` on stdout once ready' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l engine -d 'Serve every instance of the apps\' processes on this engine, whoever started it (a worker fleet): deploy each app\'s model (once per content), take over each instance nobody journals yet, and resume each one a stopped worker left' -r -f -a "flowable\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l node -d 'With --engine: a node of the engine\'s cluster (repeat for each; tried in order, the next when one stops answering) [default: --engine-url, else the first app\'s `workflow_engine.url`]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l poll -d 'With --engine: how often to look at the engine for work (`500ms`, `2s`)' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l answers -d 'With --engine: answers for the control points of the instances taken over, by id (as `start --answers`), before the app\'s model or a person' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l run-dir -d 'Where runs are journalled (`<DIR>/runs/<run-id>/journal.jsonl`)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l durability -d 'How the journal is committed: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md' -r -f -a "strict\t'fsync every event before it is shown'
batch\t'one fsync when the run waits or an external effect lands, before it is shown'
off\t'no fsync (survives a crash of the process, not of the machine)'"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l app -d 'The app, when the run\'s app folder has moved' -r -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l max-wait -d 'Wait in-process for a timer due within SECS seconds; a later one parks the run again [default: 60]' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l engine-url -d 'A run on Flowable or Kogito: the engine\'s URL, when it is no longer where the run started' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l once -d 'Look once, resume what is due, and exit'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l all -d 'With --engine: every app of the apps folder whose `workflow_engine` is that engine'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l no-model -d 'Never call a model while resuming'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l no-prompt -d 'Never ask at the terminal: questions park again (formerly `--detach`, still accepted)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -l json -d 'Stream one JSON event per line'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand worker" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -f -a "migrate" -d 'Bring the database `--store` names to this build\'s schema (versioned migrations, applied once, in one transaction; run it from any one host)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -f -a "status" -d 'The database\'s schema version and how many runs it keeps'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and not __fish_seen_subcommand_from migrate status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -l json -d 'One JSON document'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -l json -d 'One JSON document'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "migrate" -d 'Bring the database `--store` names to this build\'s schema (versioned migrations, applied once, in one transaction; run it from any one host)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "status" -d 'The database\'s schema version and how many runs it keeps'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -s o -l output -d 'Write every page (the command\'s and each subcommand\'s) into this folder instead of printing the command\'s page' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -l apps-dir -d 'Folder holding the apps (one sub-folder each)' -r -F
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -l color -d 'When to use colour' -r -f -a "auto\t''
always\t''
never\t''"
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -l store -d 'Where runs are kept: the run folder (`files`, the default), or a PostgreSQL database several hosts share (`postgres://USER:PASSWORD@HOST:PORT/DB`; each host\'s run folder is then its cache of it); `cuga-flo store migrate` prepares one' -r
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -s v -l verbose -d 'More logging on stderr (repeat for more)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -s q -l quiet -d 'Only errors on stderr, and a run\'s end (not a line per step) on stdout'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "init" -d 'Create a new app from a template: model with diagram, config, policies, scenarios'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "list" -d 'List the apps and whether each validates'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "validate" -d 'Check apps or BPMN models for every mistake that can be found before a run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "describe" -d 'What a person sees before a run: each control point, who decides there, who answers'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "graph" -d 'Draw an app\'s or a model\'s flow (mermaid, dot, a listing); export it as RDF, import an RDF graph as an app'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "start" -d 'Run a process: every control-point decision and the hook audit log, live'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "test" -d 'Run apps\' scenarios and check their expectations (for CI: --junit FILE)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "runs" -d 'The journalled runs: list, show, replay, verify, export'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "serve" -d 'Serve apps: MCP over streamable HTTP or stdio, A2A agents, the web console'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "users" -d 'The people who may sign in to the web console (serve --ui): add, remove, list'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "tools" -d 'The tools an app\'s tool sources offer (MCP servers, OpenAPI), and who confirms each; --lock writes tools.lock.json for validate'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "kogito" -d 'Kogito (Apache KIE): generate and build an app\'s service'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "worker" -d 'Resume waiting runs as their timers come due (and answered ones), until stopped'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "store" -d 'The run store a database keeps (--store postgres://…): migrate its schema, its status'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "schema" -d 'Print the JSON Schema of a flow config, a scenario or an answers file (for editors)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "man" -d 'Print the man page (roff), or write every page into a folder (--dir)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and not __fish_seen_subcommand_from init list validate describe graph start test runs serve users tools kogito worker store schema completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from graph" -f -a "export" -d 'Write an app\'s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on `agentflow:nextTask` edges), with its flow config and policies'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from graph" -f -a "import" -d 'Make a runnable app (BPMN, flow config, policies) from an RDF graph: Turtle, TriG (.trig) or N-Quads (.nq)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from graph" -f -a "query" -d 'Run a SPARQL query against graph mode\'s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from graph" -f -a "validate" -d 'Validate a process graph with SHACL against cuga-flo\'s process shapes: an app\'s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "list" -d 'List the journalled runs, newest first'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "prune" -d 'Delete old runs: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "show" -d 'Print a journalled run as `start` streamed it'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "watch" -d 'Follow a run from another terminal as `start` streams it (a live or a waiting run, until it ends), and exit as it ended: 0 completed, 1 failed, terminated or cancelled'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "replay" -d 'Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "resume" -d 'Continue a run from its journal: after a crash, an interruption, or once it parked (--due: every waiting run whose timer is due)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "pending" -d 'The questions (and messages and signals) waiting runs wait for'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "answer" -d 'Answer an open question (checked as a live answer), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "cancel" -d 'Cancel a waiting run (or one a crash left behind): it ends `cancelled`, its remote tasks cancelled at their agents (a run live in another process is refused)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "message" -d 'Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "signal" -d 'Deliver a signal to every run waiting for it, and resume each'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "verify" -d 'Check a run\'s journal against its hash chain and head file (exit 1 when it was tampered with)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "export" -d 'Write a run\'s journal as JSON lines (the audit trail) or as an XES event log'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "report" -d 'Write one self-contained HTML page of a run: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "add" -d 'Add a person (or set a new password): asked at the terminal without echo, or read from standard input\'s first line (--password-stdin)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "remove" -d 'Remove a person'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "list" -d 'List the people who may sign in'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from kogito" -f -a "build" -d 'Generate the app\'s Kogito service (a Quarkus project) and build it with Maven'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "migrate" -d 'Bring the database `--store` names to this build\'s schema (versioned migrations, applied once, in one transaction; run it from any one host)'
complete -c cuga-flo -n "__fish_cuga_flo_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "status" -d 'The database\'s schema version and how many runs it keeps'

# Apps, scenarios and run ids, from the working folder (`cuga-flo __complete`).
complete -c cuga-flo -f -a "(cuga-flo __complete -- (commandline -opc)[2..-1] 2>/dev/null)"
