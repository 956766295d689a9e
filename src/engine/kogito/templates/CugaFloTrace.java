package org.cugaflo;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jbpm.workflow.core.node.BoundaryEventNode;
import org.jbpm.workflow.core.impl.NodeImpl;
import org.jbpm.workflow.core.node.EndNode;
import org.jbpm.workflow.core.node.EventNode;
import org.jbpm.workflow.core.node.EventSubProcessNode;
import org.jbpm.workflow.core.node.ForEachNode;
import org.jbpm.workflow.core.node.StartNode;
import org.jbpm.workflow.instance.WorkflowProcessInstance;
import org.jbpm.workflow.instance.node.WorkItemNodeInstance;
import org.kie.api.definition.process.Node;
import org.kie.api.event.process.ProcessCompletedEvent;
import org.kie.api.event.process.ProcessNodeLeftEvent;
import org.kie.api.event.process.ProcessNodeTriggeredEvent;
import org.kie.api.event.process.ProcessStartedEvent;
import org.kie.kogito.internal.process.event.DefaultKogitoProcessEventListener;
import org.kie.kogito.Application;
import org.kie.kogito.internal.process.runtime.KogitoNodeInstance;
import org.kie.kogito.internal.process.runtime.KogitoProcessInstance;
import org.kie.kogito.internal.process.workitem.WorkItemExecutionException;
import org.kie.kogito.process.ProcessInstance;
import org.kie.kogito.process.Processes;
import org.kie.kogito.services.uow.UnitOfWorkExecutor;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * cuga-flo trace: Kogito 10 exposes no history of entered nodes and forgets an
 * instance (404) as soon as it ends. This CDI ProcessEventListener (picked up by
 * Kogito's generated ProcessConfig, no registration needed) records, per process
 * instance, the BPMN ids of the nodes entered (a multi-instance activity once, not
 * per instance), how it ended (completed / aborted,
 * by a terminate end event or not) and the final variables; GET /cugaflo/trace/{id}
 * returns them, during the run and after it ended.
 *
 * POST /cugaflo/error/{process}/{instance}/{workItem}?code=CODE raises BPMN error CODE
 * at the user task whose work item it is, as a work item handler's
 * WorkItemExecutionException would: jBPM delivers it to the error boundary event or
 * event sub-process that catches it (cuga-flo asks only when one does).
 *
 * POST /cugaflo/deliver/{process}/{instance}/{workItem}?type=T signals T (a message or
 * signal the run itself throws, at the user task standing for its throw event) to the
 * instance's catches and boundary events waiting for it, and returns the BPMN ids of
 * those that were waiting, in the order they started waiting.
 *
 * GET /cugaflo/waits/{process}/{instance} lists what the instance waits for that
 * cuga-flo delivers: every catch event, boundary event and event sub-process start
 * waiting for one of cuga-flo's signals (`cuga_message__…`, `cuga_signal__…`,
 * `cuga_timer__…`), as {node, type}. POST /cugaflo/signal/{process}/{instance}?type=T
 * signals T to the instance when no user task waits to deliver it from (a timer cuga-flo
 * fires, a message delivered from outside) and returns the ids of those that waited.
 */
@ApplicationScoped
public class CugaFloTrace extends DefaultKogitoProcessEventListener {

    /** how many ended traces to keep (oldest dropped first) */
    static final int MAX_ENDED = 10_000;

    /** A service with persistence (`kogito build --persistence`) also keeps each active
     *  instance's path in its variable `cugaTrace` (one BPMN id per line), stored with the
     *  instance: a restarted service restores the trace from it. */
    static final boolean PERSIST = /* {{persist}} */ false;
    static final String TRACE_VARIABLE = "cugaTrace";

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

    /** A multi-instance activity is jBPM's for-each node (of the activity's id) holding
     *  the activity (its id suffixed `_1`, hidden: jBPM fires no event for it). */
    static String bpmnId(Node node) {
        Object u = node.getMetaData().get("UniqueId");
        if (u == null && node instanceof ForEachNode) {
            return node.getId().toExternalFormat();
        }
        return u != null ? u.toString() : node.getName();
    }

    Trace trace(Object pi) {
        KogitoProcessInstance kpi = (KogitoProcessInstance) pi;
        return traces.computeIfAbsent(kpi.getStringId(), k -> restored(kpi));
    }

    /** A new trace of `kpi`: with persistence, the path its variable kept (a restarted
     *  service sees the instance for the first time mid-run). */
    static Trace restored(KogitoProcessInstance kpi) {
        Trace t = new Trace(kpi.getProcessId());
        if (PERSIST && kpi instanceof WorkflowProcessInstance) {
            Object kept = ((WorkflowProcessInstance) kpi).getVariable(TRACE_VARIABLE);
            if (kept instanceof String && !((String) kept).isEmpty()) {
                t.path.addAll(java.util.Arrays.asList(((String) kept).split("\n")));
            }
        }
        return t;
    }

    /** With persistence: the path into the instance's variable (`t` locked). */
    static void keep(Object pi, Trace t) {
        if (PERSIST && pi instanceof WorkflowProcessInstance) {
            ((WorkflowProcessInstance) pi).setVariable(TRACE_VARIABLE, String.join("\n", t.path));
        }
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
            keep(event.getProcessInstance(), t);
        }
    }

    /** jBPM starts a boundary event's node instance, and an event sub-process with its
     *  start event, when they fire without "triggering" them: they are entered where the
     *  boundary or start event leaves. */
    @Override
    public void beforeNodeLeft(ProcessNodeLeftEvent event) {
        Node node = event.getNodeInstance().getNode();
        Object parent = node instanceof NodeImpl ? ((NodeImpl) node).getParentContainer() : null;
        boolean eventStart = node instanceof StartNode && parent instanceof EventSubProcessNode;
        if (node instanceof BoundaryEventNode || eventStart) {
            Trace t = trace(event.getProcessInstance());
            synchronized (t) {
                if (eventStart) {
                    t.path.add(bpmnId((Node) parent));
                }
                t.path.add(bpmnId(node));
                keep(event.getProcessInstance(), t);
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

    /** Raise BPMN error `code` at `nodeInstance` (a user task's node instance). */
    static void raise(KogitoNodeInstance nodeInstance, String code) {
        if (!(nodeInstance instanceof WorkItemNodeInstance)) {
            throw new WebApplicationException("no user task waits there", 409);
        }
        try {
            // jBPM's own path for a failed work item (protected: no public API raises an
            // error at a waiting user task).
            Method handle = WorkItemNodeInstance.class.getDeclaredMethod("handleException", String.class,
                    Exception.class);
            handle.setAccessible(true);
            handle.invoke(nodeInstance, code,
                    new WorkItemExecutionException(code, "cuga-flo: the task raised BPMN error " + code));
            // An error ends the activity that raised it; an event sub-process that caught it
            // leaves it waiting in jBPM.
            WorkItemNodeInstance task = (WorkItemNodeInstance) nodeInstance;
            if (task.getProcessInstance().getNodeInstances(true).stream().anyMatch(n -> n == task)) {
                task.cancel();
            }
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this jBPM cannot raise an error at a user task: " + e, e);
        }
    }

    /** The signal a message or signal event sub-process starts on, for catches' `type`
     *  (not a declared signal: jBPM 10.1's code generation refuses one there). */
    static String startType(String type) {
        return type + "__start";
    }

    /** The start events of the event sub-processes among `nodes` started by signal `type`. */
    static void eventStarts(Node[] nodes, String type, List<String> out) {
        for (Node other : nodes) {
            if (other instanceof EventSubProcessNode && ((EventSubProcessNode) other).getEvents().contains(type)) {
                StartNode start = ((EventSubProcessNode) other).findStartNode();
                if (start != null && !out.contains(bpmnId(start))) {
                    out.add(bpmnId(start));
                }
            }
        }
    }

    /** The catch events, boundary events and event sub-process start events of `pi` waiting
     *  for signal `type` (the process's event sub-processes first: they wait from its start;
     *  then a sub-process's while it runs). */
    static List<String> waiting(WorkflowProcessInstance pi, String type) {
        List<String> out = new ArrayList<>();
        eventStarts(((org.kie.api.definition.process.WorkflowProcess) pi.getProcess()).getNodes(), startType(type), out);
        for (org.jbpm.workflow.instance.NodeInstance ni : pi.getNodeInstances(true)) {
            Node node = ni.getNode();
            if (node instanceof org.jbpm.workflow.core.node.CompositeNode && !(node instanceof EventSubProcessNode)) {
                eventStarts(((org.jbpm.workflow.core.node.CompositeNode) node).getNodes(), startType(type), out);
            }
            if (node instanceof EventNode && !(node instanceof BoundaryEventNode)
                    && type.equals(((EventNode) node).getType())) {
                out.add(bpmnId(node));
            }
            if (node instanceof NodeImpl) {
                String id = bpmnId(node);
                for (Node other : ((NodeImpl) node).getParentContainer().getNodes()) {
                    if (other instanceof BoundaryEventNode
                            && id.equals(((BoundaryEventNode) other).getAttachedToNodeId())
                            && type.equals(((BoundaryEventNode) other).getType())
                            && !out.contains(bpmnId(other))) {
                        out.add(bpmnId(other));
                    }
                }
            }
        }
        return out;
    }

    /** Whether `type` is one of cuga-flo's signals (not an error's or a timer's of jBPM). */
    static boolean cugaSignal(String type) {
        return type != null && (type.startsWith("cuga_message__") || type.startsWith("cuga_signal__")
                || type.startsWith("cuga_timer__"));
    }

    static void addWait(List<Map<String, Object>> out, String node, String type) {
        if (!cugaSignal(type)) {
            return;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("node", node);
        m.put("type", type);
        if (!out.contains(m)) {
            out.add(m);
        }
    }

    static void eventStartWaits(Node[] nodes, List<Map<String, Object>> out) {
        for (Node other : nodes) {
            if (other instanceof EventSubProcessNode) {
                StartNode start = ((EventSubProcessNode) other).findStartNode();
                if (start != null) {
                    for (String type : ((EventSubProcessNode) other).getEvents()) {
                        addWait(out, bpmnId(start), type);
                    }
                }
            }
        }
    }

    /** Every wait of `pi` for one of cuga-flo's signals, as {node, type}. */
    static List<Map<String, Object>> waits(WorkflowProcessInstance pi) {
        List<Map<String, Object>> out = new ArrayList<>();
        eventStartWaits(((org.kie.api.definition.process.WorkflowProcess) pi.getProcess()).getNodes(), out);
        for (org.jbpm.workflow.instance.NodeInstance ni : pi.getNodeInstances(true)) {
            Node node = ni.getNode();
            if (node instanceof org.jbpm.workflow.core.node.CompositeNode && !(node instanceof EventSubProcessNode)) {
                eventStartWaits(((org.jbpm.workflow.core.node.CompositeNode) node).getNodes(), out);
            }
            if (node instanceof EventNode && !(node instanceof BoundaryEventNode)) {
                addWait(out, bpmnId(node), ((EventNode) node).getType());
            }
            if (node instanceof NodeImpl) {
                String id = bpmnId(node);
                for (Node other : ((NodeImpl) node).getParentContainer().getNodes()) {
                    if (other instanceof BoundaryEventNode
                            && id.equals(((BoundaryEventNode) other).getAttachedToNodeId())) {
                        addWait(out, bpmnId(other), ((BoundaryEventNode) other).getType());
                    }
                }
            }
        }
        return out;
    }

    static WorkflowProcessInstance internal(ProcessInstance<?> pi) {
        org.kie.kogito.process.impl.AbstractProcessInstance<?> api =
                (org.kie.kogito.process.impl.AbstractProcessInstance<?>) pi;
        WorkflowProcessInstance wpi = api.internalGetProcessInstance();
        if (wpi == null) {
            // An instance read from storage (a service with persistence) is rebuilt on first
            // use, by a method Kogito keeps protected.
            try {
                Method load = org.kie.kogito.process.impl.AbstractProcessInstance.class
                        .getDeclaredMethod("processInstance");
                load.setAccessible(true);
                wpi = (WorkflowProcessInstance) load.invoke(api);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                throw cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("this Kogito cannot read a stored instance: " + e, e);
            }
        }
        if (wpi == null) {
            throw new NotFoundException();
        }
        return wpi;
    }

    @Path("/cugaflo/waits")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Waits {
        @Inject
        Application application;

        @Inject
        Processes processes;

        @GET
        @Path("/{process}/{id}")
        public Map<String, Object> waits(@PathParam("process") String processId, @PathParam("id") String id) {
            org.kie.kogito.process.Process<?> process = processes.processById(processId);
            if (process == null) {
                throw new NotFoundException();
            }
            return UnitOfWorkExecutor.executeInUnitOfWork(application.unitOfWorkManager(), () -> {
                ProcessInstance<?> pi = process.instances().findById(id).orElseThrow(NotFoundException::new);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", id);
                m.put("waits", CugaFloTrace.waits(internal(pi)));
                return m;
            });
        }
    }

    @Path("/cugaflo/signal")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Signals {
        @Inject
        Application application;

        @Inject
        Processes processes;

        @POST
        @Path("/{process}/{id}")
        public Map<String, Object> signal(@PathParam("process") String processId, @PathParam("id") String id,
                @QueryParam("type") String type) {
            org.kie.kogito.process.Process<?> process = processes.processById(processId);
            if (process == null || !cugaSignal(type)) {
                throw new NotFoundException();
            }
            return UnitOfWorkExecutor.executeInUnitOfWork(application.unitOfWorkManager(), () -> {
                ProcessInstance<?> pi = process.instances().findById(id).orElseThrow(NotFoundException::new);
                List<String> caught = new ArrayList<>();
                for (Map<String, Object> w : CugaFloTrace.waits(internal(pi))) {
                    Object t = w.get("type");
                    if (type.equals(t) || startType(type).equals(t)) {
                        caught.add((String) w.get("node"));
                    }
                }
                if (!caught.isEmpty()) {
                    pi.send(org.kie.kogito.process.impl.Sig.of(type, null));
                    if (pi.status() == ProcessInstance.STATE_ACTIVE) {
                        pi.send(org.kie.kogito.process.impl.Sig.of(startType(type), null));
                    }
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", id);
                m.put("caught", caught);
                return m;
            });
        }
    }

    @Path("/cugaflo/deliver")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Deliver {
        @Inject
        Application application;

        @Inject
        Processes processes;

        @POST
        @Path("/{process}/{id}/{workItem}")
        public Map<String, Object> deliver(@PathParam("process") String processId, @PathParam("id") String id,
                @PathParam("workItem") String workItem, @QueryParam("type") String type) {
            org.kie.kogito.process.Process<?> process = processes.processById(processId);
            if (process == null || type == null || type.isEmpty()) {
                throw new NotFoundException();
            }
            return UnitOfWorkExecutor.executeInUnitOfWork(application.unitOfWorkManager(), () -> {
                ProcessInstance<?> pi = process.instances().findById(id).orElseThrow(NotFoundException::new);
                List<String> caught = pi.updateWorkItem(workItem, wi -> {
                    WorkflowProcessInstance wpi = ((org.jbpm.workflow.instance.impl.NodeInstanceImpl) wi
                            .getNodeInstance()).getProcessInstance();
                    List<String> found = waiting(wpi, type);
                    if (!found.isEmpty()) {
                        wpi.signalEvent(type, null);
                        wpi.signalEvent(startType(type), null);
                    }
                    return found;
                });
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", id);
                m.put("caught", caught);
                return m;
            });
        }
    }

    @Path("/cugaflo/error")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Errors {
        @Inject
        Application application;

        @Inject
        Processes processes;

        @POST
        @Path("/{process}/{id}/{workItem}")
        public Map<String, Object> raise(@PathParam("process") String processId, @PathParam("id") String id,
                @PathParam("workItem") String workItem, @QueryParam("code") String code) {
            org.kie.kogito.process.Process<?> process = processes.processById(processId);
            if (process == null || code == null || code.isEmpty()) {
                throw new NotFoundException();
            }
            return UnitOfWorkExecutor.executeInUnitOfWork(application.unitOfWorkManager(), () -> {
                ProcessInstance<?> pi = process.instances().findById(id).orElseThrow(NotFoundException::new);
                pi.updateWorkItem(workItem, wi -> {
                    CugaFloTrace.raise(wi.getNodeInstance(), code);
                    return null;
                });
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", id);
                m.put("code", code);
                return m;
            });
        }
    }

    @Path("/cugaflo/trace")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Resource {
        @Inject
        CugaFloTrace listener;

        @Inject
        Application application;

        @Inject
        Processes processes;

        @GET
        @Path("/{id}")
        public Map<String, Object> get(@PathParam("id") String id) {
            Map<String, Object> t = listener.find(id);
            if (t == null && PERSIST) {
                // Not seen since the service started: an instance it stored.
                t = UnitOfWorkExecutor.executeInUnitOfWork(application.unitOfWorkManager(), () -> {
                    for (String processId : processes.processIds()) {
                        java.util.Optional<? extends ProcessInstance<?>> pi =
                                processes.processById(processId).instances().findById(id);
                        if (pi.isPresent()) {
                            return listener.trace(internal(pi.get())).view();
                        }
                    }
                    return null;
                });
            }
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
