#!/usr/bin/env bash
# Checks the REST contract of the Kogito prototype (tests/kogito/proto) against a
# running service. Usage:
#   tests/kogito/contract.sh            # expects the service on $KOGITO_URL
#   KOGITO_URL=http://127.0.0.1:8089 tests/kogito/contract.sh
# tests/kogito/run-proto.sh builds the project, starts it, runs this and stops it.
# Needs curl and jq. Prints the JSON it sees (set QUIET=1 to hide) and a closing
# "N passed, N failed" line; exits non-zero when a check failed.
set -u
B=${KOGITO_URL:-http://127.0.0.1:8089}
U=cuga                      # the potential owner of t1 in proto.bpmn
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
ko() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; }
check() { # check NAME JQ-EXPR JSON
    if echo "$3" | jq -e "$2" >/dev/null 2>&1; then ok "$1"; else ko "$1: $2 on $3"; fi
}
show() { [ -n "${QUIET:-}" ] || echo "    $1"; }
J='Content-Type: application/json'
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# a. start: 201, Location, the variables; instance waits at t1
R=$(curl -s -X POST "$B/proto" -H "$J" \
    -d '{"route":",x,","count":1,"score":0.5,"flag":false,"data":{"k":[1,2,{"n":null}]},"any":{"a":1},"undeclared":"dropped"}')
show "start -> $R"
check "a: start returns id and the typed variables" '.id and .count == 1 and .score == 0.5 and .data.k[2].n == null and (has("undeclared") | not)' "$R"
ID=$(echo "$R" | jq -r .id)
check "a: start returns at once, instance waits at t1 (trace)" '.state == "active" and .path == ["start","t1"]' "$(curl -s "$B/cugaflo/trace/$ID")"

# b. pending tasks
T=$(curl -s "$B/proto/$ID/tasks?user=$U")
show "tasks -> $T"
check "b: legacy task list shows t1 with its inputs" 'length == 1 and .[0].name == "t1" and .[0].parameters.route == ",x,"' "$T"
check "b: t1 is invisible without its potential owner" 'length == 0' "$(curl -s "$B/proto/$ID/tasks")"
WI=$(echo "$T" | jq -r '.[0].id')
NI=$(curl -s "$B/management/processes/proto/instances/$ID/nodeInstances")
show "nodeInstances -> $NI"
check "b: management nodeInstances gives BPMN id, work item and user task ids" \
    ".[0].parameters.UNIQUE_TASK_ID == \"t1\" and .[0].id == \"$WI\" and (.[0].externalReferenceId | length) > 0" "$NI"
UT=$(echo "$NI" | jq -r '.[0].externalReferenceId')
V=$(curl -s "$B/usertasks/instance/$UT?user=$U")
show "usertask -> $V"
check "b: new user task API: t1 is Reserved for its single potential owner" \
    ".userTaskId == \"t1\" and .status.name == \"Reserved\" and .actualOwner == \"$U\" and .metadata.ProcessInstanceId == \"$ID\"" "$V"

# c + d. complete t1 (legacy): every output is sent, the gateway routes on route
[ "$(status -X POST "$B/proto/$ID/t1/$WI?user=nobody" -H "$J" -d '{}')" = 403 ] \
    && ok "c: completing as another user is 403" || ko "c: completing as another user is 403"
R=$(curl -s -X POST "$B/proto/$ID/t1/$WI?user=$U" -H "$J" \
    -d '{"route":",a,","count":2,"score":1.25,"flag":true,"data":{"x":"y"},"any":[1,"two"],"undeclared":1}')
show "complete t1 -> $R"
check "c: completion returns the process variables, outputs mapped" '.route == ",a," and .count == 2 and .score == 1.25 and .flag == true and .data.x == "y" and .any[1] == "two"' "$R"
check "d: gateway took the ,a, branch to t2" '.path == ["start","t1","gw","t2"]' "$(curl -s "$B/cugaflo/trace/$ID")"

# e. read variables while running
check "e: GET /proto/{id} while running" '.route == ",a,"' "$(curl -s "$B/proto/$ID")"

# f. move the token t2 -> t3 with the management addon (trigger first, then cancel)
[ "$(status -X POST "$B/management/processes/proto/instances/$ID/nodes/t3")" = 200 ] \
    && ok "f: trigger node t3 by BPMN id" || ko "f: trigger node t3 by BPMN id"
NI2=$(curl -s "$B/management/processes/proto/instances/$ID/nodeInstances" | jq -r '.[] | select(.parameters.UNIQUE_TASK_ID == "t2") | .nodeInstanceId')
[ "$(status -X DELETE "$B/management/processes/proto/instances/$ID/nodeInstances/$NI2")" = 200 ] \
    && ok "f: cancel node instance of t2" || ko "f: cancel node instance of t2"
check "f: only t3 is pending now" '[.[].parameters.UNIQUE_TASK_ID] == ["t3"]' \
    "$(curl -s "$B/management/processes/proto/instances/$ID/nodeInstances")"

# complete t3 (no actors: legacy API needs no user) -> normal end
WI3=$(curl -s "$B/proto/$ID/tasks" | jq -r '.[0].id')
R=$(curl -s -X POST "$B/proto/$ID/t3/$WI3" -H "$J" -d '{}')
show "complete t3 -> $R"
check "e: the last completion returns the final variables" '.route == ",a," and .count == 2' "$R"
[ "$(status "$B/proto/$ID")" = 404 ] && ok "e: GET after the end is 404" || ko "e: GET after the end is 404"
TR=$(curl -s "$B/cugaflo/trace/$ID")
show "trace -> $TR"
check "e+h: trace keeps path, end node and final variables" \
    '.state == "completed" and .path == ["start","t1","gw","t2","t3","endNormal"] and .endNode == "endNormal" and .terminated == false and .variables.count == 2' "$TR"

# terminate end: ,a, -> t2 (group cugaflo) completed with the new user task API
ID=$(curl -s -X POST "$B/proto" -H "$J" -d '{"route":",a,","count":5}' | jq -r .id)
UT=$(curl -s "$B/management/processes/proto/instances/$ID/nodeInstances" | jq -r '.[0].externalReferenceId')
R=$(curl -s -X POST "$B/usertasks/instance/$UT/transition?user=$U" -H "$J" \
    -d '{"transitionId":"complete","data":{"route":",a,","count":5,"score":2.0,"flag":true,"data":{},"any":null}}')
check "c: new API: complete t1 in one transition" '.status.name == "Completed" and .outputs.count == 5' "$R"
UT=$(curl -s "$B/management/processes/proto/instances/$ID/nodeInstances" | jq -r '.[0].externalReferenceId')
[ "$(status -X POST "$B/usertasks/instance/$UT/transition?user=w&group=cugaflo" -H "$J" -d '{"transitionId":"complete","data":{}}')" = 500 ] \
    && ok "c: new API: a group task must be claimed first (complete from Ready is 500)" || ko "c: group task complete from Ready"
curl -s -o /dev/null -X POST "$B/usertasks/instance/$UT/transition?user=w&group=cugaflo" -H "$J" -d '{"transitionId":"claim","data":{}}'
R=$(curl -s -X POST "$B/usertasks/instance/$UT/transition?user=w&group=cugaflo" -H "$J" -d '{"transitionId":"complete","data":{"data":{"done":true}}}')
check "c: new API: claim then complete t2" '.status.name == "Completed"' "$R"
TR=$(curl -s "$B/cugaflo/trace/$ID")
show "trace -> $TR"
check "e: terminate end event seen in the trace" '.state == "completed" and .endNode == "endTerminate" and .terminated == true and .variables.data.done == true' "$TR"

# g. abort
ID=$(curl -s -X POST "$B/proto" -H "$J" -d '{"route":",b,"}' | jq -r .id)
R=$(curl -s -X DELETE "$B/proto/$ID")
check "g: DELETE returns the variables" '.route == ",b,"' "$R"
[ "$(status "$B/proto/$ID")" = 404 ] && ok "g: GET after abort is 404" || ko "g: GET after abort is 404"
check "g: trace says aborted" '.state == "aborted" and .path == ["start","t1"]' "$(curl -s "$B/cugaflo/trace/$ID")"

# i. declared-only variables; outputs not sent become null
[ "$(status -X POST "$B/proto" -H "$J" -d '{"count":"abc"}')" = 400 ] \
    && ok "i: a wrongly typed start variable is 400" || ko "i: wrongly typed start variable"
ID=$(curl -s -X POST "$B/proto" -H "$J" -d '{"route":",zz,","count":9}' | jq -r .id)
WI=$(curl -s "$B/proto/$ID/tasks?user=$U" | jq -r '.[0].id')
R=$(curl -s -X POST "$B/proto/$ID/t1/$WI?user=$U" -H "$J" -d '{"score":3.0}')
check "i: outputs left out of a completion overwrite their variables with null" '.score == 3.0 and .route == null and .count == null' "$R"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
