#!/usr/bin/env bash
# Smoke test of a running cuga-flo Flowable test server, and the executable
# record of the REST contract the Rust adapter is written against:
#
#   tests/flowable/smoke.sh PORT
#
# Deploys smoke-process.bpmn20.xml and checks, with curl and python3:
#   a. start a process instance with typed variables (json included)
#   b. acquire its external worker job (variables come with the job)
#   c. complete the job with variables; the gateway routes on them
#   c'. a continuation that fails after the complete (timer job, message)
#   d. change-state away from a task whose job is locked, and to an end event
#   e. the historic activity instances (sequence flows, order, while running)
#   f. how an ended / terminated instance looks in history
#   g. DELETE of a running instance
#   h. an invalid deployment
#   i. latencies (printed)
# Exits non-zero at the first unexpected answer. Progress goes to stderr, and a
# final "N passed, 0 failed" line to stdout.
#
# Environment: FLOWABLE_USER / FLOWABLE_PASSWORD (default admin / test).
set -euo pipefail

PORT="${1:?usage: smoke.sh PORT}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BASE="http://127.0.0.1:$PORT/flowable-rest"
AUTH="${FLOWABLE_USER:-admin}:${FLOWABLE_PASSWORD:-test}"
TOPIC="smoke-$$-$RANDOM"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
BODY="$TMP/body.json"
PASSED=0

say() { echo "smoke: $*" >&2; }
fail() {
    say "FAIL: $*"
    say "last answer: HTTP $CODE: $(head -c 2000 "$BODY" 2>/dev/null)"
    echo "$PASSED passed, 1 failed"
    exit 1
}

# req METHOD PATH [curl args...]: sets CODE and TIME, the body goes to $BODY.
req() {
    local method="$1" path="$2"
    shift 2
    local out
    out="$(curl -s -o "$BODY" -w '%{http_code} %{time_total}' -X "$method" -u "$AUTH" "$@" "$BASE$path")" \
        || { CODE=000; fail "curl $method $path failed"; }
    CODE="${out% *}"
    TIME="${out#* }"
}
# post_json PATH JSON
post_json() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }

expect_code() {
    [ "$CODE" = "$1" ] || fail "${2:-request}: expected HTTP $1, got $CODE"
}

# j EXPR: evaluates a Python expression over the last body, bound to `d`.
j() {
    python3 -c '
import json, sys, uuid
raw = open(sys.argv[1]).read()
d = json.loads(raw) if raw.strip() else None
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
' "$BODY" "$1"
}

# check EXPR MESSAGE: EXPR (Python, over `d`) must be true.
check() {
    local r
    r="$(j "bool($1)")" || fail "$2 (python error on: $1)"
    [ "$r" = true ] || fail "$2 [$1]"
    PASSED=$((PASSED + 1))
}

ms() { python3 -c "print(round(float('$1') * 1000))"; }
now_ms() { date +%s%3N; }

# wait_for DESCRIPTION METHOD PATH EXPR [curl args...]: repeats the request
# until it answers 200 and EXPR holds (10 s at most); sets WAITED_MS.
# Needed after a complete: Flowable finishes an external worker job
# asynchronously (the complete turns it into an async job that the async
# executor runs), so the process moves on a little after the 204.
wait_for() {
    local desc="$1" method="$2" path="$3" expr="$4" t0
    shift 4
    t0="$(now_ms)"
    while :; do
        req "$method" "$path" "$@"
        if [ "$CODE" = 200 ] && [ "$(j "bool($expr)" 2>/dev/null)" = true ]; then
            break
        fi
        [ $(($(now_ms) - t0)) -lt 10000 ] || fail "$desc: not within 10 s [$expr]"
        sleep 0.05
    done
    WAITED_MS=$(($(now_ms) - t0))
    PASSED=$((PASSED + 1))
}

# --- 0. auth and deployment --------------------------------------------------------
req GET "/service/repository/process-definitions?size=1" -u "nobody:wrong"
expect_code 401 "wrong credentials"
PASSED=$((PASSED + 1))

req POST /service/repository/deployments -F "file=@$HERE/smoke-process.bpmn20.xml"
expect_code 201 "deploy"
check "d['id'] and d['name'] == 'smoke-process'" "deployment answer"
DEPLOYMENT="$(j "d['id']")"
req GET "/service/repository/process-definitions?deploymentId=$DEPLOYMENT"
expect_code 200
check "d['total'] == 1 and d['data'][0]['key'] == 'cugaSmoke'" "process definition of the deployment"
say "deployed $DEPLOYMENT"

start_instance() { # TOPIC [extra variables JSON] -> PI, START_MS
    post_json /service/runtime/process-instances "{
      \"processDefinitionKey\": \"cugaSmoke\",
      \"businessKey\": \"smoke-$1\",
      \"variables\": [
        {\"name\": \"cugaTopic\", \"type\": \"string\", \"value\": \"$1\"},
        {\"name\": \"items\", \"type\": \"json\", \"value\": [{\"a\": 1}]},
        {\"name\": \"n\", \"type\": \"integer\", \"value\": 3},
        {\"name\": \"x\", \"type\": \"double\", \"value\": 0.5},
        {\"name\": \"ok\", \"type\": \"boolean\", \"value\": true}
      ]}"
    expect_code 201 "start instance"
    PI="$(j "d['id']")"
    START_MS="$(ms "$TIME")"
}

acquire() { # TOPIC WORKER -> body is the job list
    post_json /external-job-api/acquire/jobs \
        "{\"topic\": \"$1\", \"lockDuration\": \"PT10M\", \"numberOfTasks\": 5, \"workerId\": \"$2\"}"
    expect_code 200 "acquire"
}

acquire_wait() { # TOPIC WORKER EXPR DESCRIPTION: acquire until EXPR holds
    wait_for "$4" POST /external-job-api/acquire/jobs "$3" -H 'Content-Type: application/json' --data-binary \
        "{\"topic\": \"$1\", \"lockDuration\": \"PT10M\", \"numberOfTasks\": 5, \"workerId\": \"$2\"}"
}

complete() { # JOB WORKER VARIABLES_JSON
    post_json "/external-job-api/acquire/jobs/$1/complete" "{\"workerId\": \"$2\", \"variables\": $3}"
}

# --- a. start ------------------------------------------------------------------------
T1="$TOPIC-1"
start_instance "$T1"
check "d['ended'] is False and d['completed'] is False and d['activityId'] is None" "instance waits after start"
check "{v['name']: (v['type'], v['value']) for v in d['variables']}['items'] == ('json', [{'a': 1}])" "json variable echoed"
check "{v['name']: v['type'] for v in d['variables']} == {'cugaTopic': 'string', 'items': 'json', 'n': 'integer', 'x': 'double', 'ok': 'boolean'}" "variable types"
PI1="$PI"
say "a. started $PI1 in ${START_MS} ms"
req GET "/service/runtime/executions?processInstanceId=$PI1"
expect_code 200
check "sorted(e['activityId'] or '' for e in d['data']) == ['', 't1']" "waiting at t1"
req GET "/service/runtime/process-instances/$PI1/variables"
expect_code 200
check "{v['name']: v['value'] for v in d}['items'] == [{'a': 1}] and all(v['scope'] == 'local' for v in d)" "variables of the instance"

# --- b. acquire ----------------------------------------------------------------------
acquire "$T1" w1
ACQ_MS="$(ms "$TIME")"
check "len(d) == 1" "one job acquirable right after the start"
check "d[0]['elementId'] == 't1' and d[0]['processInstanceId'] == '$PI1' and d[0]['lockOwner'] == 'w1' and d[0]['lockExpirationTime']" "acquired job fields"
check "{v['name']: v['value'] for v in d[0]['variables']} == {'cugaTopic': '$T1', 'items': [{'a': 1}], 'n': 3, 'x': 0.5, 'ok': True}" "acquired job carries the process variables"
check "{v['name']: v['type'] for v in d[0]['variables']}['items'] == 'json'" "json type in acquired job"
JOB1="$(j "d[0]['id']")"
say "b. acquired $JOB1 in ${ACQ_MS} ms"
acquire "$T1" w2
check "d == []" "a locked job is not acquired twice"

# --- c. complete with variables --------------------------------------------------------
complete "$JOB1" w2 '[]'
expect_code 403 "complete by a worker without the lock"
check "'does not hold a lock' in d['exception']" "403 message"
complete "$JOB1" w1 '[{"name": "route", "type": "string", "value": "a"}, {"name": "result", "type": "json", "value": {"k": [1, 2]}}]'
expect_code 204 "complete"
COMPLETE_MS="$(ms "$TIME")"
say "c. completed $JOB1 in ${COMPLETE_MS} ms"
complete "$JOB1" w1 '[]'
expect_code 404 "complete twice"
wait_for "gateway routed to t2 (route == 'a')" GET "/external-job-api/jobs?processInstanceId=$PI1" \
    "[(x['elementId'], x['lockOwner']) for x in d['data']] == [('t2', None)]"
say "c. t2's job seen by polling ${WAITED_MS} ms after the complete's 204 (mostly the poller's own overhead; see i.)"
req GET "/service/runtime/process-instances/$PI1/variables"
check "{v['name']: v['value'] for v in d}['result'] == {'k': [1, 2]}" "completion variables land on the process instance"

# --- d. change-state ---------------------------------------------------------------------
acquire "$T1" w1
check "len(d) == 1 and d[0]['elementId'] == 't2'" "t2 job acquired"
JOB2="$(j "d[0]['id']")"
post_json "/service/runtime/process-instances/$PI1/change-state" '{"cancelActivityIds": ["t2"], "startActivityIds": ["t3"]}'
expect_code 200 "change-state t2 -> t3 with t2's job locked"
CHANGE_MS="$(ms "$TIME")"
req GET "/external-job-api/jobs?processInstanceId=$PI1"
check "[(x['elementId'], x['lockOwner']) for x in d['data']] == [('t3', None)] and d['data'][0]['id'] != '$JOB2'" "t2's job gone, t3's job there"
complete "$JOB2" w1 '[]'
expect_code 404 "completing the cancelled job"
# Acquiring an exclusive external job (the default: flowable:exclusive="true")
# locks its process instance until lockDuration runs out; completing or
# failing the job unlocks it, change-state (and unacquire) do not. So t3's job is
# not acquirable now (acquire answers [] with 200), for the 10 minutes of
# JOB2's lockDuration.
acquire "$T1" w1
check "d == []" "job after change-state held back by the process instance lock"
# Moving to an end event works even so.
post_json "/service/runtime/process-instances/$PI1/change-state" '{"cancelActivityIds": ["t3"], "startActivityIds": ["endA"]}'
expect_code 200 "change-state t3 -> endA (an end event)"
req GET "/service/runtime/process-instances/$PI1"
expect_code 404 "instance ended by moving to an end event"
req GET "/service/history/historic-process-instances/$PI1"
expect_code 200
check "d['endTime'] and d['endActivityId'] == 'endA' and d['deleteReason'] is None" "historic instance after change-state to endA"

# Workaround 1: fail the locked job first (that releases the instance lock),
# then change-state.
T4="$TOPIC-4"
start_instance "$T4"
PI4="$PI"
acquire "$T4" w1
JOB="$(j "d[0]['id']")"
post_json "/external-job-api/acquire/jobs/$JOB/fail" '{"workerId": "w1", "errorMessage": "moved by cuga-flo", "retries": 1, "retryTimeout": "PT0S"}'
expect_code 204 "fail the locked job"
post_json "/service/runtime/process-instances/$PI4/change-state" '{"cancelActivityIds": ["t1"], "startActivityIds": ["t3"]}'
expect_code 200 "change-state t1 -> t3 after fail"
acquire "$T4" w1
check "len(d) == 1 and d[0]['elementId'] == 't3'" "job acquirable at once after fail + change-state"
JOB="$(j "d[0]['id']")"
# t3's job is locked now: moving straight to an end event still works.
post_json "/service/runtime/process-instances/$PI4/change-state" '{"cancelActivityIds": ["t3"], "startActivityIds": ["endA"]}'
expect_code 200 "change-state from a locked job to an end event"
req GET "/service/history/historic-process-instances/$PI4"
check "d['endTime'] and d['endActivityId'] == 'endA'" "ended at endA"
complete "$JOB" w1 '[]'
expect_code 404 "the moved-away job is gone"

# Workaround 2: non-exclusive external worker tasks never lock the instance.
sed -e 's/id="cugaSmoke"/id="cugaSmokeNx"/' \
    -e 's/flowable:type="external-worker"/flowable:exclusive="false" flowable:type="external-worker"/' \
    "$HERE/smoke-process.bpmn20.xml" >"$TMP/smoke-nx.bpmn20.xml"
req POST /service/repository/deployments -F "file=@$TMP/smoke-nx.bpmn20.xml"
expect_code 201 "deploy the non-exclusive variant"
T5="$TOPIC-5"
post_json /service/runtime/process-instances "{\"processDefinitionKey\": \"cugaSmokeNx\", \"variables\": [{\"name\": \"cugaTopic\", \"type\": \"string\", \"value\": \"$T5\"}]}"
expect_code 201
PI5="$(j "d['id']")"
acquire "$T5" w1
check "len(d) == 1" "non-exclusive t1 acquired"
post_json "/service/runtime/process-instances/$PI5/change-state" '{"cancelActivityIds": ["t1"], "startActivityIds": ["t2"]}'
expect_code 200
acquire "$T5" w1
check "len(d) == 1 and d[0]['elementId'] == 't2'" "non-exclusive: job acquirable at once after change-state"
req DELETE "/service/runtime/process-instances/$PI5"
expect_code 204
say "d. change-state works on locked external jobs (${CHANGE_MS} ms) and to end events; the new job waits for the instance lock unless the old job was failed first or the task is non-exclusive"

# --- e. historic activity instances ----------------------------------------------------------
# ORDER: the ids are time-based (version 1) UUIDs from one generator, so their
# timestamps order the rows totally; startTime alone has millisecond ties.
ORDER="[a['activityId'] for a in sorted(d['data'], key=lambda a: uuid.UUID(a['id']).time)]"
req GET "/service/history/historic-activity-instances?processInstanceId=$PI1&size=1000&sort=startTime"
expect_code 200
check "set(d['data'][0]) == {'id', 'activityId', 'activityName', 'activityType', 'processDefinitionId', 'processDefinitionUrl', 'processInstanceId', 'processInstanceUrl', 'executionId', 'taskId', 'calledProcessInstanceId', 'assignee', 'startTime', 'endTime', 'durationInMillis', 'tenantId'}" "historic activity instance fields (no transactionOrder)"
check "$ORDER == ['start', 'f_start_t1', 't1', 'f_t1_gw', 'gw', 'f_gw_t2', 't2', 't3', 'endA']" "activity instances in id order, sequence flows included"
check "{a['activityType'] for a in d['data']} == {'startEvent', 'sequenceFlow', 'externalWorkerServiceTask', 'exclusiveGateway', 'endEvent'}" "activity types"
check "all(a['endTime'] for a in d['data'])" "all activity instances ended"

# --- f. terminate end event (second instance, route b) ----------------------------------------
T2="$TOPIC-2"
start_instance "$T2"
PI2="$PI"
req GET "/service/history/historic-activity-instances?processInstanceId=$PI2&size=1000&sort=startTime"
check "$ORDER == ['start', 'f_start_t1', 't1'] and [a['endTime'] is None for a in sorted(d['data'], key=lambda a: uuid.UUID(a['id']).time)] == [False, False, True]" "history is written while the instance runs"
req GET "/service/runtime/activity-instances?processInstanceId=$PI2&size=1000"
expect_code 200 "runtime activity instances"
check "$ORDER == ['start', 'f_start_t1', 't1']" "runtime activity instances"
acquire "$T2" w1
JOB="$(j "d[0]['id']")"
complete "$JOB" w1 '[{"name": "route", "type": "string", "value": "b"}]'
expect_code 204
acquire_wait "$T2" w1 "len(d) == 1 and d[0]['elementId'] == 't3'" "gateway routed to t3 (route == 'b')"
JOB="$(j "d[0]['id']")"
complete "$JOB" w1 '[]'
expect_code 204
wait_for "instance ended" GET "/service/history/historic-process-instances/$PI2" "d['endTime']"
check "d['endActivityId'] == 'endKill' and d['deleteReason'] == 'terminate end event (endKill)'" "terminated instance in history"
req GET "/service/runtime/process-instances/$PI2"
expect_code 404 "runtime instance gone after the terminate end event"
req GET "/service/history/historic-activity-instances?processInstanceId=$PI2&size=1000&sort=startTime"
check "$ORDER == ['start', 'f_start_t1', 't1', 'f_t1_gw', 'gw', 'f_gw_t3', 't3', 'f_t3_endKill', 'endKill']" "terminated instance's activities in order"
say "f. terminate end event seen as endActivityId=endKill, deleteReason='terminate end event (endKill)'"

# --- c'. a continuation that fails after the complete ----------------------------------------
# The complete answers 204 before the process moves on; an error there (here:
# no gateway condition holds) shows up as a retried timer job, then (after 3
# attempts, 10 s apart) as a dead-letter job, with the exception message. The
# completion variables are not applied.
T6="$TOPIC-6"
start_instance "$T6"
PI6="$PI"
acquire "$T6" w1
JOB="$(j "d[0]['id']")"
complete "$JOB" w1 '[{"name": "route", "type": "string", "value": "nowhere"}]'
expect_code 204 "complete whose continuation fails"
wait_for "failed continuation as a timer job" GET "/service/management/timer-jobs?processInstanceId=$PI6" "d['total'] == 1"
check "d['data'][0]['handlerType'] == 'external-worker-complete' and d['data'][0]['elementId'] == 't1' and d['data'][0]['retries'] == 2 and 'No outgoing sequence flow' in d['data'][0]['exceptionMessage']" "timer job fields"
req GET "/service/runtime/process-instances/$PI6/variables"
check "'route' not in [v['name'] for v in d]" "completion variables not applied"
req DELETE "/service/runtime/process-instances/$PI6?deleteReason=failed"
expect_code 204
say "c'. a failing continuation: timer job with exceptionMessage"

# --- g. DELETE a running instance ---------------------------------------------------------------
T3="$TOPIC-3"
start_instance "$T3"
PI3="$PI"
acquire "$T3" w1
check "len(d) == 1" "job of the third instance"
req DELETE "/service/runtime/process-instances/$PI3?deleteReason=cancelled%20by%20cuga-flo"
expect_code 204 "delete a running instance"
req GET "/service/history/historic-process-instances/$PI3"
check "d['endTime'] and d['endActivityId'] is None and d['deleteReason'] == 'cancelled by cuga-flo'" "deleted instance in history"
req GET "/external-job-api/jobs?processInstanceId=$PI3"
check "d['total'] == 0" "jobs of the deleted instance gone"
req DELETE "/service/runtime/process-instances/$PI3"
expect_code 404 "delete twice"
say "g. DELETE works on a running instance"

# --- h. invalid deployments ------------------------------------------------------------------------
printf '%s' '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x"><process id="bad" isExecutable="true"><startEvent id="s"/><sequenceFlow id="f" sourceRef="s" targetRef="t"/><serviceTask id="t"/><sequenceFlow id="f2" sourceRef="t" targetRef="e"/><endEvent id="e"/></process></definitions>' >"$TMP/invalid.bpmn20.xml"
req POST /service/repository/deployments -F "file=@$TMP/invalid.bpmn20.xml"
expect_code 500 "deploy a BPMN that fails validation"
check "d['message'] == 'Internal server error' and 'flowable-servicetask-missing-implementation' in d['exception']" "validation error body"
printf '%s' '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="x"><process id="bad" isExecutable="true"><startEvent id="s"/><sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/></process></definitions>' >"$TMP/dangling.bpmn20.xml"
req POST /service/repository/deployments -F "file=@$TMP/dangling.bpmn20.xml"
expect_code 500 "deploy a BPMN that fails the XSD"
check "'nowhere' in d['exception']" "XSD error body"
echo 'not xml' >"$TMP/garbage.bpmn"
req POST /service/repository/deployments -F "file=@$TMP/garbage.bpmn"
expect_code 500 "deploy garbage"
check "'Content is not allowed in prolog' in d['exception']" "parse error body"
cp "$HERE/smoke-process.bpmn20.xml" "$TMP/process.xml"
req POST /service/repository/deployments -F "file=@$TMP/process.xml"
expect_code 400 "deploy a .xml file"
check "d['exception'] == 'File must be of type .bpmn20.xml, .bpmn, .bar or .zip'" "suffix error body"

# --- i. latencies ---------------------------------------------------------------------------------
say "i. first calls: start ${START_MS} ms, acquire ${ACQ_MS} ms, complete ${COMPLETE_MS} ms, change-state ${CHANGE_MS} ms"
ROUNDS="${SMOKE_ROUNDS:-5}"
: >"$TMP/times"
for r in $(seq 1 "$ROUNDS"); do
    TR="$TOPIC-t$r"
    start_instance "$TR"
    echo "start $TIME" >>"$TMP/times"
    acquire "$TR" w1
    echo "acquire $TIME" >>"$TMP/times"
    check "len(d) == 1" "timing round $r: job acquired"
    complete "$(j "d[0]['id']")" w1 '[{"name": "route", "type": "string", "value": "a"}]'
    expect_code 204
    echo "complete $TIME" >>"$TMP/times"
    ANSWERED_MS="$(now_ms)"
    acquire_wait "$TR" w1 "len(d) == 1 and d[0]['elementId'] == 't2'" "timing round $r: t2 acquired"
    JOB="$(j "d[0]['id']")"
    # When did the asynchronous continuation start t2, relative to the 204?
    # (server and client share the clock)
    req GET "/service/history/historic-activity-instances?processInstanceId=$PI&activityId=t2"
    echo "continuation-after-204 $(j "(__import__('datetime').datetime.fromisoformat(d['data'][0]['startTime'].replace('Z', '+00:00')).timestamp() * 1000 - $ANSWERED_MS) / 1000")" >>"$TMP/times"
    complete "$JOB" w1 '[]'
    expect_code 204
    wait_for "timing round $r: ended" GET "/service/history/historic-process-instances/$PI" "d['endTime']"
done
python3 - "$TMP/times" >&2 <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    t.setdefault(k, []).append(float(v) * 1000)
print("smoke: i. latencies over %d rounds (median / max ms; continuation-after-204 < 0: t2 started before curl had the answer): %s" % (
    len(t["start"]),
    ", ".join("%s %.0f / %.0f" % (k, statistics.median(v), max(v)) for k, v in t.items())))
PY
echo "$PASSED passed, 0 failed"
