#compdef cuga-flo

autoload -U is-at-least

_cuga-flo() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_cuga-flo_commands" \
"*::: :->cuga-flo" \
&& ret=0
    case $state in
    (cuga-flo)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-command-$line[1]:"
        case $line[1] in
            (init)
_arguments "${_arguments_options[@]}" : \
'--template=[What the new app starts from]:TEMPLATE:((approval\:"A task agent, a hook that screens its answer by rule, and a gateway with a deterministic condition and a default flow"
triage\:"A task agent, then a gateway reasoned by rules and a model, with three branches"
blank\:"Start, one task agent, end"))' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The new app'\''s name\: its folder under the apps folder (letters, digits, `_` and `-`, starting with a letter):_default' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[The apps as one JSON array (with each one'\''s description and scenarios)]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(validate)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'()--all[Validate every app under the apps folder]' \
'--strict[Treat warnings as errors]' \
'--json[Print one JSON document instead of human-readable diagnostics]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::targets -- Apps (names under the apps folder, or app folders), flow config files or BPMN files:_default' \
&& ret=0
;;
(describe)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[Print one JSON document instead of the human description]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The app (a name under the apps folder, an app folder or a flow config):_default' \
&& ret=0
;;
(graph)
_arguments "${_arguments_options[@]}" : \
'--format=[The output format]:FORMAT:((mermaid\:"A Mermaid flowchart (renders in GitHub markdown)"
dot\:"A Graphviz digraph (\`dot -Tsvg\`)"
ascii\:"An indented listing of the flow, branch by branch"))' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':target -- The app (a name under the apps folder, an app folder or a flow config), or a BPMN file:_default' \
":: :_cuga-flo__subcmd__graph_commands" \
"*::: :->graph" \
&& ret=0

    case $state in
    (graph)
        words=($line[2] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-graph-command-$line[2]:"
        case $line[2] in
            (export)
_arguments "${_arguments_options[@]}" : \
'--format=[The serialisation]:FORMAT:((turtle\:"Turtle with RDF 1.2 \`{| |}\` annotations (read by RDF 1.2 and RDF-star tools)"
trig\:"TriG\: the same, in a named graph"
nquads\:"N-Quads\: annotations as reifiers with triple terms (RDF 1.2 readers only)"))' \
'--annotations=[How the annotations on conditional edges are written\: RDF 1.2 annotations (\`{| |}\`), or standard RDF reification (\`rdf\:Statement\` nodes) for RDF 1.1 readers such as rdflib]:ANNOTATIONS:((star\:"RDF 1.2 annotations (RDF 1.2 and RDF-star readers\: oxigraph, Jena)"
reified\:"Standard RDF reification\: \`rdf\:Statement\` nodes (any RDF reader)"))' \
'-o+[Write to FILE instead of stdout]:FILE:_files' \
'--output=[Write to FILE instead of stdout]:FILE:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The app (a name under the apps folder, an app folder or a flow config):_default' \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
'-o+[The app folder to create (its name is the app'\''s name)]:DIR:_files' \
'--output=[The app folder to create (its name is the app'\''s name)]:DIR:_files' \
'*--recipes=[A folder of Goose recipes (\`<name>.yaml\`) an AgentFLOW graph'\''s tasks name, looked in before \`recipes/\` beside the graph and in the folders above it]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--force[Replace the folder if it exists]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':file -- The graph file:_files' \
&& ret=0
;;
(query)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[SPARQL 1.1 JSON results instead of a table]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':target -- The app (its runs'\'' graphs), or a run id (or a unique prefix or suffix of it):_default' \
':sparql -- The SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); the usual prefixes (rdf, rdfs, xsd, sbpmnc, sbpmnp, agentflow, cf) are declared:_default' \
&& ret=0
;;
(validate)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'(--json --data-graph)--report[Print the SHACL validation report (Turtle) instead of diagnostics]' \
'(--data-graph)--json[Print the results as JSON]' \
'--data-graph[Print the data graph that is validated (N-Triples\: annotations as RDF reification), for another SHACL processor]' \
'(--report --json --data-graph)--shapes[Print the shapes (Turtle) and exit]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'::target -- The app (a name under the apps folder, an app folder or a flow config), or a graph file:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__graph__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-graph-help-command-$line[1]:"
        case $line[1] in
            (export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(query)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(validate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(start)
_arguments "${_arguments_options[@]}" : \
'--scenario=[Run \`applications/<app>/scenarios/<NAME>.yaml\`\: its inputs and answers, then check its expectations]:NAME:_default' \
'--answers=[Answers for control points, by id (YAML\: \`answers\: {<id>\: ...}\`)]:FILE:_files' \
'(--replay)--record=[Record every answer given (scenario, answers file, person) to FILE, as a cassette that \`--replay\` (or \`--answers\`) reads]:FILE:_files' \
'(--answers --scenario)--replay=[Answer only from a recorded cassette (after the policy rules), refusing an answer whose context drifted since recording; pass the inputs with --input / --var]:FILE:_files' \
'*--var=[Set a process variable (typed by its declared default); repeatable]:NAME=VALUE:_default' \
'--input=[Initial variables from a JSON object in a file, or \`-\` for stdin]:FILE|-:_default' \
'--engine=[Run on this engine instead of the config'\''s]:ENGINE:(native flowable kogito mcp)' \
'--engine-url=[The engine'\''s URL instead of the config'\''s \`workflow_engine.url\`\: an MCP engine'\''s endpoint, Flowable'\''s REST API or a Kogito service (alone\: the config'\''s engine when it is reached by URL, else an MCP engine)]:URL:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--step-budget=[Node entries allowed before the run fails (bounds loops); at least 1]:N:_default' \
'--by=[Who answers at the terminal (default\: \$USER); at a guardrail with approvers, only an approver is asked there]:NAME:_default' \
'--bridge=[How the native engine reaches the control points\: directly (the bridge contract in-process), or through the in-process MCP bridge (as an external engine would)]:BRIDGE:((direct\:"The engine calls the harness in-process, through the bridge'\''s Rust contract"
mcp\:"The engine calls the harness'\''s MCP tools over an in-process MCP connection"))' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run (exit 3) until \`cuga-flo runs resume --due\` or \`cuga-flo worker\` \[default\: 60\]]:SECS:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[Stream one JSON event per line instead of the human view]' \
'--no-model[Never call a model, even when the app configures one (answers come from the policy rules, the scenario or answers file, or a person)]' \
'--no-prompt[Never ask at the terminal\: a question for a person parks the run (exit 3) for \`cuga-flo runs answer\` (formerly \`--detach\`, still accepted)]' \
'(--no-prompt)--no-park[A question nobody can answer fails the run instead of parking it]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The app\: a name under the apps folder, an app folder or a flow config file:_default' \
&& ret=0
;;
(test)
_arguments "${_arguments_options[@]}" : \
'--junit=[Also write the results as JUnit XML to FILE]:FILE:_files' \
'--engine=[Run every scenario on this engine instead of its app'\''s]:ENGINE:(native flowable kogito mcp)' \
'-j+[How many scenarios run at once \[default\: the number of cores\]]:N:_default' \
'--jobs=[How many scenarios run at once \[default\: the number of cores\]]:N:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[One JSON object per scenario, then a summary object (JSON lines)]' \
'--model[Let the apps'\'' models answer what a scenario leaves open (by default a scenario runs without a model\: its answers and the policy rules decide)]' \
'--update[Rewrite the \`expect\:\` of each scenario whose run did not meet it from what the run did (its status, its path, the values of the variables it names; \`visits\` and \`never_visits\` are kept), and show what changed]' \
'--keep[Keep the scenarios'\'' runs (their journals, under \`<run-dir>/test-runs/<id>/\`) for reading with \`runs … --run-dir\`; by default they are deleted at the end]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::targets -- Apps (every scenario of each) or `APP\:SCENARIO`; every app when none is given:_default' \
&& ret=0
;;
(runs)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
":: :_cuga-flo__subcmd__runs_commands" \
"*::: :->runs" \
&& ret=0

    case $state in
    (runs)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-runs-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--app=[Only the runs of this app]:APP:_default' \
'--status=[Only the runs with this status]:STATUS:((completed\:""
terminated\:""
failed\:""
waiting\:"waiting for an answer, a message or a timer"
cancelled\:"Cancelled with \`runs cancel\`"
unfinished\:"Stopped without an end (a crash)\: \`runs resume\` continues it"
empty\:"Stopped before its first record was written\: it never started"
unreadable\:"The journal cannot be read"))' \
'--limit=[At most N runs (the newest)]:N:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[The runs as one JSON array]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(prune)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--older-than=[Only runs whose last record is older than this (90s, 12h, 7d, 2w)]:AGE:_default' \
'*--status=[Only runs with this status (repeatable)]:STATUS:((completed\:""
terminated\:""
failed\:""
waiting\:"waiting for an answer, a message or a timer"
cancelled\:"Cancelled with \`runs cancel\`"
unfinished\:"Stopped without an end (a crash)\: \`runs resume\` continues it"
empty\:"Stopped before its first record was written\: it never started"
unreadable\:"The journal cannot be read"))' \
'--app=[Only the runs of this app]:APP:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--include-waiting[Waiting and unfinished runs too (they still have work to do\: a question, a timer, a crash to resume from)]' \
'--yes[Delete them (without it, only say what would be deleted)]' \
'--json[What was (or would be) deleted, as one JSON object]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--allow-tampered[Read the run even when its journal fails \`runs verify\` (a warning says what is wrong)]' \
'--json[The run as one JSON document\: its state (the journal folded\: path, decisions, variables, the untrusted ones and where each came from), its summary and its records]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(watch)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--interval=[How often the journal is read for new records, in milliseconds]:MS:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (a unique fragment of it, or `last`):_default' \
&& ret=0
;;
(replay)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app is not found by its name under the apps folder]:APP|PATH:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--allow-tampered[Read the run even when its journal fails \`runs verify\` (a warning says what is wrong)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(resume)
_arguments "${_arguments_options[@]}" : \
'--concurrency=[With --due\: resume up to N due runs at once, as \`worker\` does \[default\: the number of cores\]]:N:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved]:APP|PATH:_default' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run again \[default\: 60\]]:SECS:_default' \
'--engine-url=[A run on Flowable or Kogito\: the engine'\''s URL, when it is no longer where the run started]:URL:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'()--due[Resume every waiting run whose timer is due (for cron)]' \
'--no-model[Never call a model while resuming]' \
'--no-prompt[Never ask at the terminal\: questions park again (formerly \`--detach\`, still accepted)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'::run_id -- The run'\''s id (or a unique prefix or suffix of it); with --due, leave it out:_default' \
&& ret=0
;;
(pending)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--app=[Only the runs of this app]:APP:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[One JSON document\: every open question]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(answer)
_arguments "${_arguments_options[@]}" : \
'*--flow=[A gateway\: the flow to take (repeat for an inclusive gateway)]:FLOW:_default' \
'--action=[A hook\: the action]:ACTION:_default' \
'*--target=[A hook\: the action'\''s target (twice for swap_nodes; the task for add_node)]:NODE:_default' \
'--outputs=[A task\: its outputs, a JSON object]:JSON:_default' \
'(--outputs)--error=[A task\: raise this BPMN error instead of answering outputs (an error boundary event on the task catches it)]:CODE:_default' \
'--message=[With --error\: what the error says]:TEXT:_default' \
'--choice=[The N-th offered flow or action, as \`runs pending\` numbers them]:N:_default' \
'*--set=[A hook\: set a process variable with the action (repeatable)]:NAME=JSON:_default' \
'--reason=[Why (journalled with the answer)]:TEXT:_default' \
'--by=[Who answers (default\: \$USER)]:NAME:_default' \
'--reply=[A question a consulted remote person asked back (\`input-required\`)\: the reply, sent to them in the same A2A task]:TEXT:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved]:APP|PATH:_default' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run again \[default\: 60\]]:SECS:_default' \
'--engine-url=[A run on Flowable or Kogito\: the engine'\''s URL, when it is no longer where the run started]:URL:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--no-resume[Only record the answer; \`runs resume\` applies it later]' \
'--no-model[Never call a model while resuming]' \
'--no-prompt[Never ask at the terminal\: questions park again (formerly \`--detach\`, still accepted)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
':control_point -- The control point\: its element id (task, gateway or hook) or the question'\''s key:_default' \
'::decision -- A guardrail gateway, or a tool call waiting for a person\: `approve` or `deny`:_default' \
&& ret=0
;;
(cancel)
_arguments "${_arguments_options[@]}" : \
'--reason=[Why (journalled with the cancellation)]:TEXT:_default' \
'--by=[Who cancels (default\: \$USER)]:NAME:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved (its remote agents are read from it)]:APP|PATH:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[Print the cancellation as one JSON object]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(message)
_arguments "${_arguments_options[@]}" : \
'(--key)--correlate=[Find the run by a variable'\''s value instead of its id (exactly one waiting run must hold it)]:NAME=VALUE:_default' \
'--key=[The message'\''s correlation key value (the model'\''s, e.g. Camunda 8'\''s \`<zeebe\:subscription correlationKey>\`)\: with the message'\''s name alone, every waiting run with a wait for it under that key receives it; with a run id, only that run'\''s wait under that key]:VALUE:_default' \
'*--var=[A variable the message sets in the run (repeatable; VALUE\: JSON, else a string)]:NAME=VALUE:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved]:APP|PATH:_default' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run again \[default\: 60\]]:SECS:_default' \
'--engine-url=[A run on Flowable or Kogito\: the engine'\''s URL, when it is no longer where the run started]:URL:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--no-resume[Only record the delivery; \`runs resume\` (or the worker) applies it later]' \
'--no-model[Never call a model while resuming]' \
'--no-prompt[Never ask at the terminal\: questions park again (formerly \`--detach\`, still accepted)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::targets -- The run'\''s id (or a unique prefix or suffix of it), then the message'\''s name; with --correlate or --key, the message'\''s name alone:_default' \
&& ret=0
;;
(signal)
_arguments "${_arguments_options[@]}" : \
'*--var=[A variable the signal sets in each run (repeatable; VALUE\: JSON, else a string)]:NAME=VALUE:_default' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved]:APP|PATH:_default' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run again \[default\: 60\]]:SECS:_default' \
'--engine-url=[A run on Flowable or Kogito\: the engine'\''s URL, when it is no longer where the run started]:URL:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--no-resume[Only record the deliveries; \`runs resume\` (or the worker) applies them later]' \
'--no-model[Never call a model while resuming]' \
'--no-prompt[Never ask at the terminal\: questions park again (formerly \`--detach\`, still accepted)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':name -- The signal'\''s name:_default' \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[The report as one JSON object]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--format=[]:FORMAT:((jsonl\:"The journal'\''s records, one JSON object per line, with their hash chain"
xes\:"An IEEE 1849 XES 1.0 event log (one trace, one event per activity)"))' \
'-o+[Write to this file instead of stdout]:FILE:_files' \
'--output=[Write to this file instead of stdout]:FILE:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--allow-tampered[Read the run even when its journal fails \`runs verify\` (a warning says what is wrong)]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'-o+[Where to write the page (standard output when not given and it is not a terminal)]:FILE:_files' \
'--output=[Where to write the page (standard output when not given and it is not a terminal)]:FILE:_files' \
'--app=[The app, when the run'\''s app is not found by its name under the apps folder]:APP|PATH:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--allow-tampered[Read the run even when its journal fails \`runs verify\` (a warning says what is wrong)]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':run_id -- The run'\''s id (or a unique prefix or suffix of it):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__runs__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-runs-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(prune)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(watch)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(replay)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(resume)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(pending)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(answer)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(cancel)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(message)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(signal)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(serve)
_arguments "${_arguments_options[@]}" : \
'--http=[Serve MCP over streamable HTTP at http\://HOST\:PORT/mcp (port 0\: any free port); prints \`listening http\://HOST\:PORT/mcp\` on stdout once ready]:HOST:PORT:_default' \
'--a2a=[Serve each app as an A2A 1.0 agent at http\://HOST\:PORT/<app> (its card at <app>/.well-known/agent-card.json; port 0\: any free port); prints \`listening http\://HOST\:PORT\` and one \`agent <app> <url>\` line per app on stdout once ready]:HOST:PORT:_default' \
'(--stdio)--ui=[Serve the web console (tasklist, runs, start) at http\://HOST\:PORT, alone or beside --a2a or --http on the same run host (beside --http, a question nobody answers parks its run for the console'\''s people); prints \`listening http\://HOST\:PORT\` (beside the others, \`console http\://HOST\:PORT\` after their lines) once ready]:HOST:PORT:_default' \
'--users=[The console'\''s users file (\`cuga-flo users add\`) \[default\: <run-dir>/users, when it exists\]; without one (nor --user-header), only a loopback address is served, to the local user]:FILE:_files' \
'(--users)--user-header=[A trusted reverse proxy signs people in and names them in this request header (e.g. X-Forwarded-User); the console must then be reachable through the proxy only]:HEADER:_default' \
'(--token-file --stdio)--token-env=[Require \`Authorization\: Bearer <token>\`, the token read from this environment variable (needed to bind to anything but a loopback address)]:VAR:_default' \
'(--stdio)--token-file=[Require \`Authorization\: Bearer <token>\`, the token read from this file (its first line)]:FILE:_files' \
'--metrics=[Serve the process'\''s metrics (runs, control points, model and tool calls, journal commits) in Prometheus'\''s text format at http\://HOST\:PORT/metrics (port 0\: any free port), behind the bearer token when one is given; prints \`metrics URL\` with the listening lines]:HOST:PORT:_default' \
'--read-timeout=[Seconds a client has to send a request'\''s head and body; also how long a connection may idle between requests before it is closed (HTTP, A2A)]:SECS:_default' \
'--max-sessions=[MCP sessions open at once; a new session beyond gets HTTP 503 (HTTP); A2A\: tasks going at once (a new task beyond is refused)]:N:_default' \
'--session-idle=[Seconds an MCP session may go unused before it is closed (HTTP); A2A\: how long a task waits for the caller'\''s answer when input-required (then it fails), and how long an ended task can still be read]:SECS:_default' \
'--answers=[Answers for control points, by id (YAML\: \`answers\: {<id>\: ...}\`), asked after the policy rules and before the app'\''s model]:FILE:_files' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--bridge=[How the runs that clients start with \`run_process\` reach the control points\: directly (the bridge contract in-process), or back through the in-process MCP bridge, as an engine in another process would]:BRIDGE:((direct\:"The engine calls the harness in-process, through the bridge'\''s Rust contract"
mcp\:"The engine calls the harness'\''s MCP tools over an in-process MCP connection"))' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a run whose timer is due later parks, held by the server, which resumes it when the timer is due \[default\: 60\]]:SECS:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'()--all[Serve every app under the apps folder (those that do not validate are reported and left out)]' \
'--stdio[Serve MCP over stdin and stdout (logs go to stderr; nothing else to stdout)]' \
'--no-model[Never call a model, even when an app configures one]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::apps -- The apps to serve\: names under the apps folder, app folders or flow config files:_default' \
&& ret=0
;;
(users)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
":: :_cuga-flo__subcmd__users_commands" \
"*::: :->users" \
&& ret=0

    case $state in
    (users)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-users-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
'--users=[The users file \[default\: <run-dir>/users\]]:FILE:_files' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--password-stdin[Read the password from standard input'\''s first line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':name -- Their name\: what an app'\''s approvers list and a journal'\''s `by` say:_default' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--users=[The users file \[default\: <run-dir>/users\]]:FILE:_files' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':name:_default' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--users=[The users file \[default\: <run-dir>/users\]]:FILE:_files' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__users__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-users-help-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(tools)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--lock[Write \`tools.lock.json\` beside the flow config (what \`validate\` checks against)]' \
'--json[One JSON document\: each source with its tools, or why it cannot be reached]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The app (a name under the apps folder, an app folder or a flow config):_default' \
&& ret=0
;;
(kogito)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
":: :_cuga-flo__subcmd__kogito_commands" \
"*::: :->kogito" \
&& ret=0

    case $state in
    (kogito)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-kogito-command-$line[1]:"
        case $line[1] in
            (build)
_arguments "${_arguments_options[@]}" : \
'-o+[Where the project goes (default\: .cuga-flo/kogito/<app>)]:DIR:_files' \
'--output=[Where the project goes (default\: .cuga-flo/kogito/<app>)]:DIR:_files' \
'--port=[The service'\''s port (default\: the port of the config'\''s \`workflow_engine.url\`, else 8081)]:PORT:_default' \
'--persistence=[Where the service keeps its process instances\: \`memory\` (a restart forgets them) or \`postgresql\` (Kogito'\''s JDBC persistence; the database from QUARKUS_DATASOURCE_JDBC_URL, _USERNAME, _PASSWORD when the service starts)]:STORE:(memory postgresql)' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--no-build[Write the project only; do not run Maven]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':app -- The app\: a name under the apps folder, an app folder or a flow config file:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__kogito__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-kogito-help-command-$line[1]:"
        case $line[1] in
            (build)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(worker)
_arguments "${_arguments_options[@]}" : \
'--interval=[Seconds between two looks for due runs]:SECS:_default' \
'--graph-poll=[Also look this often (\`30s\`, \`2m\`, \`500ms\`; a bare number is seconds) into the graph of each run parked at a guardrail, on an endpoint or the embedded store on disk, and resume it as soon as an approver'\''s decision is there]:DURATION:_default' \
'--concurrency=[Resume up to N due runs at once \[default\: the number of cores\]]:N:_default' \
'--metrics=[Serve the worker'\''s metrics (its queue, how late due runs are, the runs it resumes) in Prometheus'\''s text format at http\://HOST\:PORT/metrics (a loopback address; port 0\: any free port); prints \`metrics URL\` on stdout once ready]:HOST:PORT:_default' \
'--engine=[Serve every instance of the apps'\'' processes on this engine, whoever started it (a worker fleet)\: deploy each app'\''s model (once per content), take over each instance nobody journals yet, and resume each one a stopped worker left]:ENGINE:(flowable)' \
'*--node=[With --engine\: a node of the engine'\''s cluster (repeat for each; tried in order, the next when one stops answering) \[default\: --engine-url, else the first app'\''s \`workflow_engine.url\`\]]:URL:_default' \
'--poll=[With --engine\: how often to look at the engine for work (\`500ms\`, \`2s\`)]:DURATION:_default' \
'--answers=[With --engine\: answers for the control points of the instances taken over, by id (as \`start --answers\`), before the app'\''s model or a person]:FILE:_files' \
'--run-dir=[Where runs are journalled (\`<DIR>/runs/<run-id>/journal.jsonl\`)]:DIR:_files' \
'--durability=[How the journal is committed\: strict (fsync each event), batch (one fsync per step) or off (no fsync); see docs/journal.md]:MODE:((strict\:"fsync every event before it is shown"
batch\:"one fsync when the run waits or an external effect lands, before it is shown"
off\:"no fsync (survives a crash of the process, not of the machine)"))' \
'--app=[The app, when the run'\''s app folder has moved]:APP|PATH:_default' \
'--max-wait=[Wait in-process for a timer due within SECS seconds; a later one parks the run again \[default\: 60\]]:SECS:_default' \
'--engine-url=[A run on Flowable or Kogito\: the engine'\''s URL, when it is no longer where the run started]:URL:_default' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--once[Look once, resume what is due, and exit]' \
'()--all[With --engine\: every app of the apps folder whose \`workflow_engine\` is that engine]' \
'--no-model[Never call a model while resuming]' \
'--no-prompt[Never ask at the terminal\: questions park again (formerly \`--detach\`, still accepted)]' \
'--json[Stream one JSON event per line]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'*::apps -- With --engine\: the apps to serve (names or folders):_default' \
&& ret=0
;;
(store)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
":: :_cuga-flo__subcmd__store_commands" \
"*::: :->store" \
&& ret=0

    case $state in
    (store)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-store-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[One JSON document]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'--json[One JSON document]' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__store__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-store-help-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(schema)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':kind -- Which file'\''s schema:((config\:"A flow config (\`config/<app>_config.yaml\`)"
scenario\:"A scenario (\`scenarios/<name>.yaml\`)"
answers\:"An answers file (\`start --answers FILE\`)"))' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
':shell -- The shell to write completions for:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
'-o+[Write every page (the command'\''s and each subcommand'\''s) into this folder instead of printing the command'\''s page]:DIR:_files' \
'--output=[Write every page (the command'\''s and each subcommand'\''s) into this folder instead of printing the command'\''s page]:DIR:_files' \
'--apps-dir=[Folder holding the apps (one sub-folder each)]:DIR:_files' \
'--color=[When to use colour]:WHEN:(auto always never)' \
'--store=[Where runs are kept\: the run folder (\`files\`, the default), or a PostgreSQL database several hosts share (\`postgres\://USER\:PASSWORD@HOST\:PORT/DB\`; each host'\''s run folder is then its cache of it); \`cuga-flo store migrate\` prepares one]:URL:_default' \
'*-v[More logging on stderr (repeat for more)]' \
'*--verbose[More logging on stderr (repeat for more)]' \
'(-v --verbose)-q[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'(-v --verbose)--quiet[Only errors on stderr, and a run'\''s end (not a line per step) on stdout]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-command-$line[1]:"
        case $line[1] in
            (init)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(validate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(describe)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(graph)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help__subcmd__graph_commands" \
"*::: :->graph" \
&& ret=0

    case $state in
    (graph)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-graph-command-$line[1]:"
        case $line[1] in
            (export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(import)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(query)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(validate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(start)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(test)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(runs)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help__subcmd__runs_commands" \
"*::: :->runs" \
&& ret=0

    case $state in
    (runs)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-runs-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(prune)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(watch)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(replay)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(resume)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(pending)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(answer)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(cancel)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(message)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(signal)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(verify)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(serve)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(users)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help__subcmd__users_commands" \
"*::: :->users" \
&& ret=0

    case $state in
    (users)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-users-command-$line[1]:"
        case $line[1] in
            (add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(tools)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(kogito)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help__subcmd__kogito_commands" \
"*::: :->kogito" \
&& ret=0

    case $state in
    (kogito)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-kogito-command-$line[1]:"
        case $line[1] in
            (build)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(worker)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(store)
_arguments "${_arguments_options[@]}" : \
":: :_cuga-flo__subcmd__help__subcmd__store_commands" \
"*::: :->store" \
&& ret=0

    case $state in
    (store)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:cuga-flo-help-store-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(schema)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_cuga-flo_commands] )) ||
_cuga-flo_commands() {
    local commands; commands=(
'init:Create a new app from a template\: model with diagram, config, policies, scenarios' \
'list:List the apps and whether each validates' \
'validate:Check apps or BPMN models for every mistake that can be found before a run' \
'describe:What a person sees before a run\: each control point, who decides there, who answers' \
'graph:Draw an app'\''s or a model'\''s flow (mermaid, dot, a listing); export it as RDF, import an RDF graph as an app' \
'start:Run a process\: every control-point decision and the hook audit log, live' \
'test:Run apps'\'' scenarios and check their expectations (for CI\: --junit FILE)' \
'runs:The journalled runs\: list, show, replay, verify, export' \
'serve:Serve apps\: MCP over streamable HTTP or stdio, A2A agents, the web console' \
'users:The people who may sign in to the web console (serve --ui)\: add, remove, list' \
'tools:The tools an app'\''s tool sources offer (MCP servers, OpenAPI), and who confirms each; --lock writes tools.lock.json for validate' \
'kogito:Kogito (Apache KIE)\: generate and build an app'\''s service' \
'worker:Resume waiting runs as their timers come due (and answered ones), until stopped' \
'store:The run store a database keeps (--store postgres\://…)\: migrate its schema, its status' \
'schema:Print the JSON Schema of a flow config, a scenario or an answers file (for editors)' \
'completions:Print a shell completion script (bash, zsh, fish, elvish, powershell)' \
'man:Print the man page (roff), or write every page into a folder (--dir)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__completions_commands] )) ||
_cuga-flo__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo completions commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__describe_commands] )) ||
_cuga-flo__subcmd__describe_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo describe commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph_commands] )) ||
_cuga-flo__subcmd__graph_commands() {
    local commands; commands=(
'export:Write an app'\''s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on \`agentflow\:nextTask\` edges), with its flow config and policies' \
'import:Make a runnable app (BPMN, flow config, policies) from an RDF graph\: Turtle, TriG (.trig) or N-Quads (.nq)' \
'query:Run a SPARQL query against graph mode'\''s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals' \
'validate:Validate a process graph with SHACL against cuga-flo'\''s process shapes\: an app'\''s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo graph commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__export_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help_commands() {
    local commands; commands=(
'export:Write an app'\''s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on \`agentflow\:nextTask\` edges), with its flow config and policies' \
'import:Make a runnable app (BPMN, flow config, policies) from an RDF graph\: Turtle, TriG (.trig) or N-Quads (.nq)' \
'query:Run a SPARQL query against graph mode'\''s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals' \
'validate:Validate a process graph with SHACL against cuga-flo'\''s process shapes\: an app'\''s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo graph help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help__subcmd__export_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph help export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help__subcmd__import_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph help import commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help__subcmd__query_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help__subcmd__query_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph help query commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__help__subcmd__validate_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__help__subcmd__validate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph help validate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__import_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph import commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__query_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__query_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph query commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__graph__subcmd__validate_commands] )) ||
_cuga-flo__subcmd__graph__subcmd__validate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo graph validate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help_commands] )) ||
_cuga-flo__subcmd__help_commands() {
    local commands; commands=(
'init:Create a new app from a template\: model with diagram, config, policies, scenarios' \
'list:List the apps and whether each validates' \
'validate:Check apps or BPMN models for every mistake that can be found before a run' \
'describe:What a person sees before a run\: each control point, who decides there, who answers' \
'graph:Draw an app'\''s or a model'\''s flow (mermaid, dot, a listing); export it as RDF, import an RDF graph as an app' \
'start:Run a process\: every control-point decision and the hook audit log, live' \
'test:Run apps'\'' scenarios and check their expectations (for CI\: --junit FILE)' \
'runs:The journalled runs\: list, show, replay, verify, export' \
'serve:Serve apps\: MCP over streamable HTTP or stdio, A2A agents, the web console' \
'users:The people who may sign in to the web console (serve --ui)\: add, remove, list' \
'tools:The tools an app'\''s tool sources offer (MCP servers, OpenAPI), and who confirms each; --lock writes tools.lock.json for validate' \
'kogito:Kogito (Apache KIE)\: generate and build an app'\''s service' \
'worker:Resume waiting runs as their timers come due (and answered ones), until stopped' \
'store:The run store a database keeps (--store postgres\://…)\: migrate its schema, its status' \
'schema:Print the JSON Schema of a flow config, a scenario or an answers file (for editors)' \
'completions:Print a shell completion script (bash, zsh, fish, elvish, powershell)' \
'man:Print the man page (roff), or write every page into a folder (--dir)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__completions_commands] )) ||
_cuga-flo__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help completions commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__describe_commands] )) ||
_cuga-flo__subcmd__help__subcmd__describe_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help describe commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__graph_commands] )) ||
_cuga-flo__subcmd__help__subcmd__graph_commands() {
    local commands; commands=(
'export:Write an app'\''s process as RDF (sBPMN/AgentFLOW vocabulary; conditions as RDF 1.2 annotations on \`agentflow\:nextTask\` edges), with its flow config and policies' \
'import:Make a runnable app (BPMN, flow config, policies) from an RDF graph\: Turtle, TriG (.trig) or N-Quads (.nq)' \
'query:Run a SPARQL query against graph mode'\''s store of an app (all its runs) or of one run. An endpoint is asked directly; the embedded in-memory store is rebuilt from the journals' \
'validate:Validate a process graph with SHACL against cuga-flo'\''s process shapes\: an app'\''s export, or a graph file (Turtle, TriG .trig, N-Quads .nq). Exit 1 on a violation' \
    )
    _describe -t commands 'cuga-flo help graph commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__graph__subcmd__export_commands] )) ||
_cuga-flo__subcmd__help__subcmd__graph__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help graph export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__graph__subcmd__import_commands] )) ||
_cuga-flo__subcmd__help__subcmd__graph__subcmd__import_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help graph import commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__graph__subcmd__query_commands] )) ||
_cuga-flo__subcmd__help__subcmd__graph__subcmd__query_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help graph query commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__graph__subcmd__validate_commands] )) ||
_cuga-flo__subcmd__help__subcmd__graph__subcmd__validate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help graph validate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__init_commands] )) ||
_cuga-flo__subcmd__help__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help init commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__kogito_commands] )) ||
_cuga-flo__subcmd__help__subcmd__kogito_commands() {
    local commands; commands=(
'build:Generate the app'\''s Kogito service (a Quarkus project) and build it with Maven' \
    )
    _describe -t commands 'cuga-flo help kogito commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__kogito__subcmd__build_commands] )) ||
_cuga-flo__subcmd__help__subcmd__kogito__subcmd__build_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help kogito build commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__list_commands] )) ||
_cuga-flo__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__man_commands] )) ||
_cuga-flo__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help man commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs_commands() {
    local commands; commands=(
'list:List the journalled runs, newest first' \
'prune:Delete old runs\: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting' \
'show:Print a journalled run as \`start\` streamed it' \
'watch:Follow a run from another terminal as \`start\` streams it (a live or a waiting run, until it ends), and exit as it ended\: 0 completed, 1 failed, terminated or cancelled' \
'replay:Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same' \
'resume:Continue a run from its journal\: after a crash, an interruption, or once it parked (--due\: every waiting run whose timer is due)' \
'pending:The questions (and messages and signals) waiting runs wait for' \
'answer:Answer an open question (checked as a live answer), journal it, and resume the run' \
'cancel:Cancel a waiting run (or one a crash left behind)\: it ends \`cancelled\`, its remote tasks cancelled at their agents (a run live in another process is refused)' \
'message:Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run' \
'signal:Deliver a signal to every run waiting for it, and resume each' \
'verify:Check a run'\''s journal against its hash chain and head file (exit 1 when it was tampered with)' \
'export:Write a run'\''s journal as JSON lines (the audit trail) or as an XES event log' \
'report:Write one self-contained HTML page of a run\: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table' \
    )
    _describe -t commands 'cuga-flo help runs commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__answer_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__answer_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs answer commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__cancel_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__cancel_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs cancel commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__export_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__list_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__message_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__message_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs message commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__pending_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__pending_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs pending commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__prune_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__prune_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs prune commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__replay_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__replay_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs replay commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__report_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs report commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__resume_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__resume_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs resume commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__show_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs show commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__signal_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__signal_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs signal commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__verify_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs verify commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__runs__subcmd__watch_commands] )) ||
_cuga-flo__subcmd__help__subcmd__runs__subcmd__watch_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help runs watch commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__schema_commands] )) ||
_cuga-flo__subcmd__help__subcmd__schema_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help schema commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__serve_commands] )) ||
_cuga-flo__subcmd__help__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help serve commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__start_commands] )) ||
_cuga-flo__subcmd__help__subcmd__start_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help start commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__store_commands] )) ||
_cuga-flo__subcmd__help__subcmd__store_commands() {
    local commands; commands=(
'migrate:Bring the database \`--store\` names to this build'\''s schema (versioned migrations, applied once, in one transaction; run it from any one host)' \
'status:The database'\''s schema version and how many runs it keeps' \
    )
    _describe -t commands 'cuga-flo help store commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__store__subcmd__migrate_commands] )) ||
_cuga-flo__subcmd__help__subcmd__store__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help store migrate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__store__subcmd__status_commands] )) ||
_cuga-flo__subcmd__help__subcmd__store__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help store status commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__test_commands] )) ||
_cuga-flo__subcmd__help__subcmd__test_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help test commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__tools_commands] )) ||
_cuga-flo__subcmd__help__subcmd__tools_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help tools commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__users_commands] )) ||
_cuga-flo__subcmd__help__subcmd__users_commands() {
    local commands; commands=(
'add:Add a person (or set a new password)\: asked at the terminal without echo, or read from standard input'\''s first line (--password-stdin)' \
'remove:Remove a person' \
'list:List the people who may sign in' \
    )
    _describe -t commands 'cuga-flo help users commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__users__subcmd__add_commands] )) ||
_cuga-flo__subcmd__help__subcmd__users__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help users add commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__users__subcmd__list_commands] )) ||
_cuga-flo__subcmd__help__subcmd__users__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help users list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__users__subcmd__remove_commands] )) ||
_cuga-flo__subcmd__help__subcmd__users__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help users remove commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__validate_commands] )) ||
_cuga-flo__subcmd__help__subcmd__validate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help validate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__help__subcmd__worker_commands] )) ||
_cuga-flo__subcmd__help__subcmd__worker_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo help worker commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__init_commands] )) ||
_cuga-flo__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo init commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__kogito_commands] )) ||
_cuga-flo__subcmd__kogito_commands() {
    local commands; commands=(
'build:Generate the app'\''s Kogito service (a Quarkus project) and build it with Maven' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo kogito commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__kogito__subcmd__build_commands] )) ||
_cuga-flo__subcmd__kogito__subcmd__build_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo kogito build commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__kogito__subcmd__help_commands] )) ||
_cuga-flo__subcmd__kogito__subcmd__help_commands() {
    local commands; commands=(
'build:Generate the app'\''s Kogito service (a Quarkus project) and build it with Maven' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo kogito help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__kogito__subcmd__help__subcmd__build_commands] )) ||
_cuga-flo__subcmd__kogito__subcmd__help__subcmd__build_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo kogito help build commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__kogito__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__kogito__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo kogito help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__list_commands] )) ||
_cuga-flo__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__man_commands] )) ||
_cuga-flo__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo man commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs_commands] )) ||
_cuga-flo__subcmd__runs_commands() {
    local commands; commands=(
'list:List the journalled runs, newest first' \
'prune:Delete old runs\: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting' \
'show:Print a journalled run as \`start\` streamed it' \
'watch:Follow a run from another terminal as \`start\` streams it (a live or a waiting run, until it ends), and exit as it ended\: 0 completed, 1 failed, terminated or cancelled' \
'replay:Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same' \
'resume:Continue a run from its journal\: after a crash, an interruption, or once it parked (--due\: every waiting run whose timer is due)' \
'pending:The questions (and messages and signals) waiting runs wait for' \
'answer:Answer an open question (checked as a live answer), journal it, and resume the run' \
'cancel:Cancel a waiting run (or one a crash left behind)\: it ends \`cancelled\`, its remote tasks cancelled at their agents (a run live in another process is refused)' \
'message:Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run' \
'signal:Deliver a signal to every run waiting for it, and resume each' \
'verify:Check a run'\''s journal against its hash chain and head file (exit 1 when it was tampered with)' \
'export:Write a run'\''s journal as JSON lines (the audit trail) or as an XES event log' \
'report:Write one self-contained HTML page of a run\: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo runs commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__answer_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__answer_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs answer commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__cancel_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__cancel_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs cancel commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__export_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help_commands() {
    local commands; commands=(
'list:List the journalled runs, newest first' \
'prune:Delete old runs\: say which (a dry run), or delete them with --yes; never a run another process has open, nor a waiting or unfinished one without --include-waiting' \
'show:Print a journalled run as \`start\` streamed it' \
'watch:Follow a run from another terminal as \`start\` streams it (a live or a waiting run, until it ends), and exit as it ended\: 0 completed, 1 failed, terminated or cancelled' \
'replay:Re-execute a journalled run from its recorded answers, with no model, and check that every decision is the same' \
'resume:Continue a run from its journal\: after a crash, an interruption, or once it parked (--due\: every waiting run whose timer is due)' \
'pending:The questions (and messages and signals) waiting runs wait for' \
'answer:Answer an open question (checked as a live answer), journal it, and resume the run' \
'cancel:Cancel a waiting run (or one a crash left behind)\: it ends \`cancelled\`, its remote tasks cancelled at their agents (a run live in another process is refused)' \
'message:Deliver a message to a run waiting for it (by id, or --correlate NAME=VALUE), journal it, and resume the run' \
'signal:Deliver a signal to every run waiting for it, and resume each' \
'verify:Check a run'\''s journal against its hash chain and head file (exit 1 when it was tampered with)' \
'export:Write a run'\''s journal as JSON lines (the audit trail) or as an XES event log' \
'report:Write one self-contained HTML page of a run\: its BPMN diagram with the path taken, the decisions, adaptations and timings laid over it, and its journal as a table' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo runs help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__answer_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__answer_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help answer commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__cancel_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__cancel_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help cancel commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__export_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help export commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__list_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__message_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__message_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help message commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__pending_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__pending_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help pending commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__prune_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__prune_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help prune commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__replay_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__replay_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help replay commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__report_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help report commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__resume_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__resume_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help resume commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__show_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help show commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__signal_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__signal_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help signal commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__verify_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help verify commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__help__subcmd__watch_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__help__subcmd__watch_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs help watch commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__list_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__message_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__message_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs message commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__pending_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__pending_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs pending commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__prune_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__prune_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs prune commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__replay_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__replay_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs replay commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__report_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs report commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__resume_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__resume_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs resume commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__show_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs show commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__signal_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__signal_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs signal commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__verify_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__verify_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs verify commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__runs__subcmd__watch_commands] )) ||
_cuga-flo__subcmd__runs__subcmd__watch_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo runs watch commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__schema_commands] )) ||
_cuga-flo__subcmd__schema_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo schema commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__serve_commands] )) ||
_cuga-flo__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo serve commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__start_commands] )) ||
_cuga-flo__subcmd__start_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo start commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store_commands] )) ||
_cuga-flo__subcmd__store_commands() {
    local commands; commands=(
'migrate:Bring the database \`--store\` names to this build'\''s schema (versioned migrations, applied once, in one transaction; run it from any one host)' \
'status:The database'\''s schema version and how many runs it keeps' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo store commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__help_commands] )) ||
_cuga-flo__subcmd__store__subcmd__help_commands() {
    local commands; commands=(
'migrate:Bring the database \`--store\` names to this build'\''s schema (versioned migrations, applied once, in one transaction; run it from any one host)' \
'status:The database'\''s schema version and how many runs it keeps' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo store help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__store__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo store help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__help__subcmd__migrate_commands] )) ||
_cuga-flo__subcmd__store__subcmd__help__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo store help migrate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__help__subcmd__status_commands] )) ||
_cuga-flo__subcmd__store__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo store help status commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__migrate_commands] )) ||
_cuga-flo__subcmd__store__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo store migrate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__store__subcmd__status_commands] )) ||
_cuga-flo__subcmd__store__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo store status commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__test_commands] )) ||
_cuga-flo__subcmd__test_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo test commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__tools_commands] )) ||
_cuga-flo__subcmd__tools_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo tools commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users_commands] )) ||
_cuga-flo__subcmd__users_commands() {
    local commands; commands=(
'add:Add a person (or set a new password)\: asked at the terminal without echo, or read from standard input'\''s first line (--password-stdin)' \
'remove:Remove a person' \
'list:List the people who may sign in' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo users commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__add_commands] )) ||
_cuga-flo__subcmd__users__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users add commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__help_commands] )) ||
_cuga-flo__subcmd__users__subcmd__help_commands() {
    local commands; commands=(
'add:Add a person (or set a new password)\: asked at the terminal without echo, or read from standard input'\''s first line (--password-stdin)' \
'remove:Remove a person' \
'list:List the people who may sign in' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'cuga-flo users help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__help__subcmd__add_commands] )) ||
_cuga-flo__subcmd__users__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users help add commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__help__subcmd__help_commands] )) ||
_cuga-flo__subcmd__users__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users help help commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__help__subcmd__list_commands] )) ||
_cuga-flo__subcmd__users__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users help list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__help__subcmd__remove_commands] )) ||
_cuga-flo__subcmd__users__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users help remove commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__list_commands] )) ||
_cuga-flo__subcmd__users__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users list commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__users__subcmd__remove_commands] )) ||
_cuga-flo__subcmd__users__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo users remove commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__validate_commands] )) ||
_cuga-flo__subcmd__validate_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo validate commands' commands "$@"
}
(( $+functions[_cuga-flo__subcmd__worker_commands] )) ||
_cuga-flo__subcmd__worker_commands() {
    local commands; commands=()
    _describe -t commands 'cuga-flo worker commands' commands "$@"
}

if [ "$funcstack[1]" = "_cuga-flo" ]; then
    _cuga-flo "$@"
else
    compdef _cuga-flo cuga-flo
fi
