package org.yarndrf.shim.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import java.io.IOException;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.JettyUtils;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RMWSConsts;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RMWebServices;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.dao.SchedulerTypeInfo;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * The RM's REST service ({@code /ws/v1/cluster/...}) with {@code /scheduler} answered for
 * yarn-drf, bound by {@code yarn.webapp.custom.webservice.class}. Hadoop's
 * {@code getSchedulerInfo} knows only its own three schedulers and answers 404 for any other;
 * every other endpoint is RMWebServices' own, unchanged.
 *
 * <p>The override keeps RMWebServices' method (its return type is fixed) but is a JAX-RS
 * sub-resource locator: Jersey serves the request with the resource method of the object it
 * returns, {@link SchedulerAnswer}, which writes FairScheduler-shaped JSON or XML
 * ({@link FairShapedQueues}) as the client's Accept header prefers, JSON by default as the RM's
 * other endpoints. The document is rebuilt at most once per {@link #CACHE_MS}: a client polling
 * in a loop costs the RM one walk of the queue tree a second, and never a call to the core.
 */
@Singleton
@Path(RMWSConsts.RM_WEB_SERVICE_PATH)
public class YarnDrfWebServices extends RMWebServices {
  static final long CACHE_MS = 1000;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ResourceManager rm;
  private Map<String, Object> cached;
  private long cachedAtMs = Long.MIN_VALUE;

  @Inject
  public YarnDrfWebServices(ResourceManager rm, Configuration conf) {
    super(rm, conf);
    this.rm = rm;
  }

  @Path(RMWSConsts.SCHEDULER)
  @Override
  public SchedulerTypeInfo getSchedulerInfo() {
    ResourceScheduler scheduler = rm.getResourceScheduler();
    if (!(scheduler instanceof YarnDrfScheduler)) {
      return new HadoopsAnswer();  // another scheduler: Hadoop's own answer, unchanged
    }
    return new SchedulerAnswer(document((YarnDrfScheduler) scheduler));
  }

  private synchronized Map<String, Object> document(YarnDrfScheduler scheduler) {
    long now = System.nanoTime() / 1_000_000;
    if (cached == null || now - cachedAtMs >= CACHE_MS) {
      cached = FairShapedQueues.document(scheduler);
      cachedAtMs = now;
    }
    return cached;
  }

  /** The scheduler document, written as JSON or XML. */
  public static final class SchedulerAnswer extends SchedulerTypeInfo {
    private final Map<String, Object> doc;

    SchedulerAnswer(Map<String, Object> doc) {
      this.doc = doc;
    }

    @GET
    @Produces({MediaType.APPLICATION_JSON + "; " + JettyUtils.UTF_8,
        MediaType.APPLICATION_XML + "; " + JettyUtils.UTF_8})
    public Response get(@Context HttpHeaders headers) throws IOException, XMLStreamException {
      if (prefersXml(headers.getAcceptableMediaTypes())) {
        return Response.ok(xml(doc), MediaType.APPLICATION_XML + "; " + JettyUtils.UTF_8).build();
      }
      return Response.ok(JSON.writeValueAsString(doc),
          MediaType.APPLICATION_JSON + "; " + JettyUtils.UTF_8).build();
    }
  }

  /** Hadoop's answer for its own schedulers (this class may be bound with another one). */
  public final class HadoopsAnswer extends SchedulerTypeInfo {
    @GET
    @Produces({MediaType.APPLICATION_JSON + "; " + JettyUtils.UTF_8,
        MediaType.APPLICATION_XML + "; " + JettyUtils.UTF_8})
    public SchedulerTypeInfo get() {
      return YarnDrfWebServices.super.getSchedulerInfo();
    }
  }

  /** XML when the client's first type that is JSON or XML is XML (sorted by preference). */
  static boolean prefersXml(List<MediaType> acceptable) {
    for (MediaType t : acceptable) {
      if (t.isCompatible(MediaType.APPLICATION_XML_TYPE) && !t.isWildcardType()) {
        return true;
      }
      if (t.isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
        return false;
      }
    }
    return false;
  }

  /**
   * The document as the RM's JAXB writer lays out FairScheduler's: an element per field, a list
   * as its element repeated, the scheduler info's type as xsi:type.
   */
  static String xml(Map<String, Object> doc) throws XMLStreamException {
    StringWriter out = new StringWriter();
    XMLStreamWriter w = XMLOutputFactory.newInstance().createXMLStreamWriter(out);
    w.writeStartDocument("UTF-8", "1.0");
    for (Map.Entry<String, Object> e : doc.entrySet()) {
      element(w, e.getKey(), e.getValue());
    }
    w.writeEndDocument();
    w.close();
    return out.toString();
  }

  @SuppressWarnings("unchecked")
  private static void element(XMLStreamWriter w, String name, Object value)
      throws XMLStreamException {
    if (value instanceof List) {
      for (Object item : (List<Object>) value) {
        element(w, name, item);
      }
      return;
    }
    w.writeStartElement(name);
    if (value instanceof Map) {
      Map<String, Object> fields = (Map<String, Object>) value;
      Object type = fields.get("type");
      if (type != null) {
        w.writeNamespace("xsi", "http://www.w3.org/2001/XMLSchema-instance");
        w.writeAttribute("http://www.w3.org/2001/XMLSchema-instance", "type", type.toString());
      }
      for (Map.Entry<String, Object> f : fields.entrySet()) {
        if (!f.getKey().equals("type")) {
          element(w, f.getKey(), f.getValue());
        }
      }
    } else {
      w.writeCharacters(String.valueOf(value));
    }
    w.writeEndElement();
  }
}
