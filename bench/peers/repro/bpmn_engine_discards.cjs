// bpmn-engine (npm 25.0.1, bpmn-elements 17.3.0): a chain of exclusive split/merge blocks
// costs 2^blocks.
//
// k blocks of exclusive split -> task A (condition true) | task B (default, not taken) ->
// exclusive merge. Expected: k tasks run and, per block, B and nothing else discarded.
// Observed: the discards double with every block. bpmn-engine propagates a "discard" down
// every untaken flow (dead-path elimination, so a parallel join downstream can count its
// inbound flows); an exclusive merge is not a join, so it handles each inbound message on
// its own (bpmn-elements src/activity/Activity.js _onInbound): the discard arriving from B
// discards the merge and everything after it once more, the next split discards both its
// branches, both reach the next merge, and so on: the discards (and the run time) double per block.
// Usage: BPMN_ENGINE_DIR=<folder with node_modules> node bpmn_engine_discards.cjs
'use strict';
const path = require('path');
const { EventEmitter } = require('events');
const { Engine } = require(path.join(process.env.BPMN_ENGINE_DIR, 'node_modules', 'bpmn-engine'));
function model(k) {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>',
    '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" targetNamespace="x">',
    '<process id="P" isExecutable="true"><startEvent id="start"/>'];
  let prev = 'start', f = 0;
  const flow = (s, t, c) => { f++; out.push(c ? `<sequenceFlow id="f${f}" sourceRef="${s}" targetRef="${t}"><conditionExpression xsi:type="tFormalExpression">${c}</conditionExpression></sequenceFlow>` : `<sequenceFlow id="f${f}" sourceRef="${s}" targetRef="${t}"/>`); return `f${f}`; };
  for (let i = 0; i < k; i++) {
    out.push(`<exclusiveGateway id="s${i}" default="f${f + 3}"/><task id="a${i}"/><task id="b${i}"/><exclusiveGateway id="m${i}"/>`);
    flow(prev, `s${i}`); flow(`s${i}`, `a${i}`, '${environment.variables.go}'); flow(`s${i}`, `b${i}`); flow(`a${i}`, `m${i}`); flow(`b${i}`, `m${i}`);
    prev = `m${i}`;
  }
  out.push('<endEvent id="end"/>'); flow(prev, 'end'); out.push('</process></definitions>');
  return out.join('\n');
}
(async () => {
  for (const k of [1, 2, 4, 6, 8, 10]) {
    const listener = new EventEmitter();
    let discards = 0, ends = 0;
    listener.on('activity.discard', () => discards++);
    listener.on('activity.end', (api) => { if (api.id.startsWith('a') || api.id.startsWith('b')) ends++; });
    const engine = new Engine({ name: 'x', source: model(k), variables: { go: true } });
    const t = process.hrtime.bigint();
    await new Promise((res, rej) => { engine.once('end', res); engine.once('error', rej); engine.execute({ listener }); });
    console.log(`blocks ${k}: tasks run ${ends}, activities discarded ${discards}, ${(Number(process.hrtime.bigint() - t) / 1e6).toFixed(0)} ms`);
  }
})();
