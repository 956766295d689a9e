// Run one BPMN model on bpmn-engine (npm); print {"load_s", "run_s", "tasks"} as JSON.
// Each no-op task is a serviceTask whose implementation is a JavaScript function (its
// control point, which calls back on the next event-loop turn); exclusive conditions read environment.variables.go.
// Usage: BPMN_ENGINE_DIR=<folder with node_modules> node bpmn_engine_driver.cjs MODEL.bpmn
'use strict';
const fs = require('fs');
const path = require('path');

const t0 = process.hrtime.bigint();
const dir = process.env.BPMN_ENGINE_DIR;
if (!dir) {
  console.error('BPMN_ENGINE_DIR is not set');
  process.exit(2);
}
const { Engine } = require(path.join(dir, 'node_modules', 'bpmn-engine'));
const t1 = process.hrtime.bigint();
const source = fs.readFileSync(process.argv[2], 'utf8');
let calls = 0;
const engine = new Engine({
  name: 'bench',
  source,
  variables: { go: true },
  services: {
    noop(...args) {
      calls += 1;
      // the no-op control point, answered on the next turn of the event loop (calling back
      // synchronously overflows the stack after a few hundred tasks in a chain)
      setImmediate(args[args.length - 1]);
    },
  },
});
const secs = (a, b) => Number(b - a) / 1e9;
let t2;
engine.once('end', () => {
  const t3 = process.hrtime.bigint();
  console.log(JSON.stringify({ import_s: secs(t0, t1), load_s: secs(t1, t2), run_s: secs(t2, t3), tasks: calls }));
});
engine.once('error', (err) => {
  console.error('bpmn-engine:', err && err.message);
  process.exit(1);
});
// bpmn-engine parses the source (bpmn-moddle) when it executes: the parse counts as the run.
t2 = process.hrtime.bigint();
engine.execute().catch((err) => {
  console.error('bpmn-engine:', err && err.message);
  process.exit(1);
});
