package org.yarndrf.shim;

import java.lang.reflect.Field;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.impl.pb.ResourcePBImpl;
import org.apache.hadoop.yarn.api.records.impl.pb.ResourceRequestPBImpl;
import org.apache.hadoop.yarn.proto.YarnProtos.ResourceInformationProto;
import org.apache.hadoop.yarn.proto.YarnProtos.ResourceProto;
import org.apache.hadoop.yarn.proto.YarnProtos.ResourceRequestProto;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.util.UnitsConversionUtil;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Custom resource amounts an application sent without a unit are read in the resource type's own
 * unit: {@code gpu-mem} 4096 with no unit is 4096 Mi.
 *
 * <p>Why: YARN's record layer (ResourcePBImpl, when the RPC message is parsed) converts an amount
 * whose unit is the empty string into the type's unit as if "" were the base unit, so 4096 becomes
 * 4096 / 2^20 = 0 Mi. Spark's YARN client sends {@code
 * spark.yarn.executor.resource.gpu-mem.amount=4096} that way, and every stage-level resource
 * profile always: its executors would run with no GPU memory and nobody would be told. Hadoop's
 * own clients read a bare number in the type's unit (ResourceUtils.getRequestedResourcesFromConfig
 * for MapReduce, Resource.setResourceValue for the distributed shell); this makes the RM agree.
 *
 * <p>The amount as sent survives in the protobuf message the record was parsed from: the
 * package-private {@code proto} field of ResourceRequestPBImpl for an AM's asks, and of
 * ResourcePBImpl for the AM container resource in the submission context. It is read by
 * reflection; if a Hadoop version lacks the field, nothing is corrected and that is logged once.
 * An amount is corrected only when its current value is exactly YARN's conversion of the raw
 * one, so a request whose message was rewritten since it was parsed is left alone.
 */
final class UnitlessAmounts {
  private static final Logger LOG = LoggerFactory.getLogger(UnitlessAmounts.class);
  private static final Field REQUEST_PROTO = protoField(ResourceRequestPBImpl.class);
  private static final Field RESOURCE_PROTO = protoField(ResourcePBImpl.class);

  private UnitlessAmounts() {
  }

  /**
   * Corrects, in place and before YARN normalizes them, the custom amounts of {@code asks} that
   * were sent without a unit. {@code app} is the asking application: the AM's own request (the
   * list RMAppAttemptImpl passes is the app's AM request list) is read from its submission
   * context, which holds the AM resource as the client sent it.
   */
  static void correct(RMApp app, List<ResourceRequest> asks) {
    boolean amAsks = app != null && asks == app.getAMResourceRequests();
    for (ResourceRequest ask : asks) {
      ResourceProto raw = rawCapability(ask);
      if (raw == null && amAsks) {
        raw = rawResource(app.getApplicationSubmissionContext());
      }
      if (raw == null || ask.getCapability() == null) {
        continue;
      }
      Resource corrected = corrected(ask.getCapability(), raw);
      if (corrected != null) {
        LOG.info("yarn-drf: {} asked for {} with custom amounts that have no unit; they are read "
            + "in their resource type's unit: {}", app == null ? "an application"
            : app.getApplicationId(), ask.getCapability(), corrected);
        ask.setCapability(corrected);
      }
    }
  }

  /**
   * {@code current} with each unit-less custom amount of {@code raw} in the type's unit, or null
   * when there is none to correct.
   */
  static Resource corrected(Resource current, ResourceProto raw) {
    Resource out = null;
    for (ResourceInformationProto entry : raw.getResourceValueMapList()) {
      String name = entry.getKey();
      if (!entry.hasUnits() || !entry.getUnits().isEmpty() || !entry.hasValue()
          || ResourceInformation.MEMORY_URI.equals(name)
          || ResourceInformation.VCORES_URI.equals(name)
          || !ResourceUtils.getResourceTypeIndex().containsKey(name)) {
        continue;
      }
      String unit = ResourceUtils.getDefaultUnit(name);
      long asSent = entry.getValue();
      if (unit.isEmpty() || current.getResourceValue(name)
          != UnitsConversionUtil.convert("", unit, asSent)) {
        continue;
      }
      if (out == null) {
        out = Resources.clone(current);
      }
      out.setResourceValue(name, asSent);
    }
    return out;
  }

  private static ResourceProto rawCapability(ResourceRequest ask) {
    if (REQUEST_PROTO == null || !(ask instanceof ResourceRequestPBImpl)) {
      return null;
    }
    ResourceRequestProto proto = (ResourceRequestProto) read(REQUEST_PROTO, ask);
    return proto != null && proto.hasCapability() ? proto.getCapability() : null;
  }

  private static ResourceProto rawResource(ApplicationSubmissionContext context) {
    Resource r = context == null ? null : context.getResource();
    if (RESOURCE_PROTO == null || !(r instanceof ResourcePBImpl)) {
      return null;
    }
    return (ResourceProto) read(RESOURCE_PROTO, r);
  }

  private static Object read(Field field, Object record) {
    try {
      return field.get(record);
    } catch (IllegalAccessException e) {
      return null;
    }
  }

  private static Field protoField(Class<?> record) {
    try {
      Field f = record.getDeclaredField("proto");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException | RuntimeException e) {
      LOG.warn("yarn-drf: cannot read {}.proto ({}): custom amounts sent without a unit are "
          + "converted as YARN does (as the base unit)", record.getName(), e.toString());
      return null;
    }
  }
}
