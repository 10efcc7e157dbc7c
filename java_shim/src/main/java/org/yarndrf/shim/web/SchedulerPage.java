package org.yarndrf.shim.web;

import com.google.inject.Inject;
import java.io.IOException;
import java.util.Locale;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.MetricsOverviewTable;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RMAppsBlock;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.SubView;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet.TABLE;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet.TBODY;
import org.apache.hadoop.yarn.webapp.view.HtmlPage.Page;
import org.apache.hadoop.yarn.webapp.view.HtmlPage.__;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;
import org.yarndrf.shim.YarnDrfScheduler;

/**
 * The ResourceManager web UI's Scheduler page (/cluster/scheduler) for yarn-drf, named by the RM's
 * {@code yarn.http.rmwebapp.scheduler.page.class}. Hadoop 3.4 draws this page itself only for its
 * own three schedulers; for any other it renders the class that key names, and fails without one.
 *
 * <p>The page shows what YARN itself knows of each queue (weight, dominant share of the cluster,
 * used and pending resources, apps), then the RM's usual application table, and links to yarn-drf's
 * dashboard, which holds what only the core knows: each queue's weighted-DRF target, why each app
 * waits, free room per node and the history of the shares.
 */
public class SchedulerPage extends RmView {
  @Override
  protected void preHead(Page.HTML<__> html) {
    super.preHead(html);  // the application table's set-up, which also titles the page after it
    setTitle("yarn-drf Scheduler");
  }

  @Override
  protected void postHead(Page.HTML<__> html) {
    html.style().$type("text/css").__(
        "#yarn-drf { margin: 0.8em 0 0.4em }",
        "#yarn-drf-queues { width: auto; border-collapse: collapse; margin-bottom: 1em }",
        "#yarn-drf-queues th, #yarn-drf-queues td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd;"
            + " text-align: left; white-space: nowrap }").__();
  }

  @Override
  protected Class<? extends SubView> content() {
    return QueuesBlock.class;
  }

  /** The cluster overview, the queue table, the dashboard's address and the applications. */
  public static class QueuesBlock extends HtmlBlock {
    private final ResourceManager rm;

    @Inject
    QueuesBlock(ResourceManager rm, ViewContext ctx) {
      super(ctx);
      this.rm = rm;
    }

    @Override
    protected void render(Block html) {
      html.__(MetricsOverviewTable.class);
      String dashboard = dashboardAddress(rm.getResourceScheduler());
      Hamlet.P<Hamlet.DIV<Hamlet>> note = html.div("#yarn-drf").p();
      if (dashboard != null) {
        note.__("yarn-drf's own view (weighted-DRF targets, why each app waits, free room per node, shares "
            + "over time) is its dashboard on this ResourceManager's host: ")
            .a("#yarn-drf-dashboard", dashboard, dashboard);
      } else {
        note.__("yarn-drf's own view (weighted-DRF targets, why each app waits, free room per node, shares "
            + "over time) is its dashboard at http://127.0.0.1:PORT/ui/ on the host of `yarn-drf serve "
            + "--status-port PORT`, or where yarn-drf.dashboard.url says.");
      }
      note.__().__();
      TBODY<TABLE<Hamlet>> rows = html.table("#yarn-drf-queues").thead().tr()
          .th("queue").th("weight").th("dominant share").th("used").th("pending")
          .th("running apps").th("pending apps").th("state").__().__().tbody();
      try {
        addRows(rows, rm.getResourceScheduler().getQueueInfo("root", true, true), 0);
      } catch (IOException e) {
        rows.tr().td().$colspan(8).__("the scheduler has no queue tree yet: " + e.getMessage()).__().__();
      }
      rows.__().__();
      html.__(RMAppsBlock.class);
    }

    private static void addRows(TBODY<TABLE<Hamlet>> rows, QueueInfo q, int depth) {
      QueueMetrics m = QueueMetrics.getQueueMetrics().get(q.getQueuePath());
      rows.tr().$class("queue").$title(q.getQueuePath())
          .td().$style(String.format(Locale.ROOT, "padding-left:%.1fem", 0.5 + 1.5 * depth))
              .__(q.getQueuePath()).__()
          .td(depth == 0 ? "" : number(q.getWeight()))
          .td(String.format(Locale.ROOT, "%.1f%%", 100.0 * q.getCurrentCapacity()))
          .td(m == null ? "-" : amounts(m.getAllocatedResources()))
          .td(m == null ? "-" : amounts(m.getPendingResources()))
          .td(m == null ? "-" : Integer.toString(m.getAppsRunning()))
          .td(m == null ? "-" : Integer.toString(m.getAppsPending()))
          .td(String.valueOf(q.getQueueState())).__();
      for (QueueInfo child : q.getChildQueues()) {
        addRows(rows, child, depth + 1);
      }
    }
  }

  /** 2 for 2.0, 1.5 for 1.5. */
  static String number(float value) {
    String s = Float.toString(value);
    return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
  }

  /** "memory-mb 2048, vcores 2": the resource types this resource holds any of. */
  static String amounts(Resource r) {
    StringBuilder out = new StringBuilder();
    for (ResourceInformation ri : r.getResources()) {
      if (ri.getValue() != 0) {
        out.append(out.length() == 0 ? "" : ", ").append(ri.getName()).append(' ').append(ri.getValue());
      }
    }
    return out.length() == 0 ? "-" : out.toString();
  }

  /**
   * The dashboard of the core this RM's scheduler runs (YarnDrfScheduler#dashboardUrl: the
   * operator's URL, or the status port its child reported); null when it cannot be known.
   */
  static String dashboardAddress(ResourceScheduler scheduler) {
    return scheduler instanceof YarnDrfScheduler ? ((YarnDrfScheduler) scheduler).dashboardUrl()
        : null;
  }
}
