package org.cugaflo;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jbpm.workflow.core.node.EndNode;
import org.kie.api.definition.process.Node;
import org.kie.api.event.process.ProcessCompletedEvent;
import org.kie.api.event.process.ProcessNodeTriggeredEvent;
import org.kie.api.event.process.ProcessStartedEvent;
import org.kie.kogito.internal.process.event.DefaultKogitoProcessEventListener;
import org.kie.kogito.internal.process.runtime.KogitoProcessInstance;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * cuga-flo trace: Kogito 10 exposes no history of entered nodes and forgets an
 * instance (404) as soon as it ends. This CDI ProcessEventListener (picked up by
 * Kogito's generated ProcessConfig, no registration needed) records, per process
 * instance, the BPMN ids of the nodes entered, how it ended (completed / aborted,
 * by a terminate end event or not) and the final variables; GET /cugaflo/trace/{id}
 * returns them, during the run and after it ended.
 */
@ApplicationScoped
public class CugaFloTrace extends DefaultKogitoProcessEventListener {

    /** how many ended traces to keep (oldest dropped first) */
    static final int MAX_ENDED = 10_000;

    static final class Trace {
        final String processId;
        final List<String> path = new ArrayList<>();
        volatile String state = "active";
        volatile String endNode;
        volatile boolean terminated;
        volatile Map<String, Object> variables;
        volatile long endedAt;

        Trace(String processId) {
            this.processId = processId;
        }

        synchronized Map<String, Object> view() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("processId", processId);
            m.put("state", state);
            m.put("path", new ArrayList<>(path));
            m.put("endNode", endNode);
            m.put("terminated", terminated);
            m.put("variables", variables);
            return m;
        }
    }

    final Map<String, Trace> traces = new ConcurrentHashMap<>();

    static String pid(Object pi) {
        return ((KogitoProcessInstance) pi).getStringId();
    }

    static String bpmnId(Node node) {
        Object u = node.getMetaData().get("UniqueId");
        return u != null ? u.toString() : node.getName();
    }

    Trace trace(Object pi) {
        KogitoProcessInstance kpi = (KogitoProcessInstance) pi;
        return traces.computeIfAbsent(kpi.getStringId(), k -> new Trace(kpi.getProcessId()));
    }

    @Override
    public void beforeProcessStarted(ProcessStartedEvent event) {
        trace(event.getProcessInstance());
    }

    @Override
    public void beforeNodeTriggered(ProcessNodeTriggeredEvent event) {
        Node node = event.getNodeInstance().getNode();
        Trace t = trace(event.getProcessInstance());
        synchronized (t) {
            t.path.add(bpmnId(node));
            if (node instanceof EndNode) {
                t.endNode = bpmnId(node);
                t.terminated = ((EndNode) node).isTerminate();
            }
        }
    }

    @Override
    public void afterProcessCompleted(ProcessCompletedEvent event) {
        KogitoProcessInstance pi = (KogitoProcessInstance) event.getProcessInstance();
        Trace t = trace(pi);
        synchronized (t) {
            switch (pi.getState()) {
                case KogitoProcessInstance.STATE_COMPLETED: t.state = "completed"; break;
                case KogitoProcessInstance.STATE_ABORTED: t.state = "aborted"; break;
                case KogitoProcessInstance.STATE_ERROR: t.state = "error"; break;
                default: t.state = "state-" + pi.getState();
            }
            t.variables = new LinkedHashMap<>(pi.getVariables());
            t.endedAt = System.nanoTime();
        }
        prune();
    }

    void prune() {
        long ended = traces.values().stream().filter(t -> t.endedAt != 0).count();
        if (ended <= MAX_ENDED) {
            return;
        }
        traces.entrySet().stream().filter(e -> e.getValue().endedAt != 0)
                .sorted((a, b) -> Long.compare(a.getValue().endedAt, b.getValue().endedAt))
                .limit(ended - MAX_ENDED).map(Map.Entry::getKey).toList()
                .forEach(traces::remove);
    }

    // accessed through methods: a field read on the injected client proxy would not reach the bean
    public Map<String, Object> find(String id) {
        Trace t = traces.get(id);
        return t == null ? null : t.view();
    }

    public Map<String, Object> forget(String id) {
        Trace t = traces.remove(id);
        return t == null ? null : t.view();
    }

    @Path("/cugaflo/trace")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Resource {
        @Inject
        CugaFloTrace listener;

        @GET
        @Path("/{id}")
        public Map<String, Object> get(@PathParam("id") String id) {
            Map<String, Object> t = listener.find(id);
            if (t == null) {
                throw new NotFoundException();
            }
            return t;
        }

        @DELETE
        @Path("/{id}")
        public Map<String, Object> forget(@PathParam("id") String id) {
            Map<String, Object> t = listener.forget(id);
            if (t == null) {
                throw new NotFoundException();
            }
            return t;
        }
    }
}
