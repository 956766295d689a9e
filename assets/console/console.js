// cuga-flo web console: typed fields checked before a form is sent (the server checks
// again), and a run page that follows its run live (server-sent events). Text from runs
// is only ever set with textContent.
(function () {
  'use strict';
  function check(field) {
    var kind = field.getAttribute('data-kind');
    var value = field.value;
    var problem = '';
    if (value !== '' && (kind === 'list' || kind === 'object' || kind === 'any')) {
      try {
        var parsed = JSON.parse(value);
        if (kind === 'list' && !Array.isArray(parsed)) { problem = 'a JSON list, e.g. [1, 2]'; }
        if (kind === 'object' && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))) { problem = 'a JSON object, e.g. {"a": 1}'; }
      } catch (e) {
        if (kind !== 'any') { problem = 'JSON (' + (kind === 'list' ? 'a list' : 'an object') + ')'; }
      }
    }
    field.setCustomValidity(problem ? 'Expected ' + problem : '');
    return !problem;
  }
  Array.prototype.forEach.call(document.querySelectorAll('form'), function (form) {
    form.addEventListener('submit', function (event) {
      var ok = true;
      Array.prototype.forEach.call(form.querySelectorAll('[data-kind]'), function (f) { ok = check(f) && ok; });
      if (!ok || !form.checkValidity()) {
        event.preventDefault();
        form.reportValidity();
        document.body.setAttribute('data-refused', 'client');
      }
    });
    Array.prototype.forEach.call(form.querySelectorAll('[data-kind]'), function (f) {
      f.addEventListener('input', function () { check(f); });
    });
  });

  var runId = document.getElementById('run-id');
  if (!runId || !window.EventSource) { return; }
  var status = document.getElementById('status');
  var steps = document.getElementById('steps');
  var journal = document.querySelector('#journal tbody');
  // How many records the page has drawn (shown or not): the stream goes on from there.
  var seen = journal ? Number(journal.getAttribute('data-from') || journal.rows.length) : 0;
  var source = new EventSource('/runs/' + encodeURIComponent(runId.textContent) + '/live?from=' + seen);
  document.body.setAttribute('data-live', 'connecting');
  source.addEventListener('open', function () { document.body.setAttribute('data-live', 'open'); });
  source.addEventListener('record', function (e) {
    var r = JSON.parse(e.data);
    var tr = document.createElement('tr');
    tr.className = 'ev-' + r.row[2];
    r.row.forEach(function (cell) {
      var td = document.createElement('td');
      td.textContent = cell;
      tr.appendChild(td);
    });
    if (journal) { journal.appendChild(tr); }
    if (r.status && status) { status.textContent = r.status; status.className = 'status status-' + r.status; }
    if (steps && typeof r.steps === 'number') { steps.textContent = String(r.steps); }
  });
  // The run parked or ended: the page is drawn again (its diagram, its questions).
  source.addEventListener('changed', function () {
    source.close();
    window.location.reload();
  });
})();
