package io.watchfanout.ingester.ops;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.ArrayList;
import java.util.List;

/**
 * Logback filter that drops the warnings of one Kafka client logger that contain one of the
 * configured fragments, and lets everything else through: for a retry the client handles and
 * that is expected in a known situation, so that the situation does not look like a problem.
 * Narrower than raising the logger's level, which would also hide its other warnings.
 *
 * <pre>{@code
 * <filter class="io.watchfanout.ingester.ops.ExpectedKafkaRetryFilter">
 *   <loggerName>org.apache.kafka.clients.producer.internals.Sender</loggerName>
 *   <fragment>Error: CONCURRENT_TRANSACTIONS</fragment>
 * </filter>
 * }</pre>
 *
 * <p>Configured once by logback, then read-only: thread-safe.
 */
public final class ExpectedKafkaRetryFilter extends Filter<ILoggingEvent> {
    private String loggerName = "";
    private final List<String> fragments = new ArrayList<>();

    /** @param loggerName the logger whose warnings are filtered (by logback's configuration) */
    public void setLoggerName(String loggerName) {
        this.loggerName = loggerName == null ? "" : loggerName.trim();
    }

    /** @param fragment text of a warning to drop; may be given several times */
    public void addFragment(String fragment) {
        if (fragment != null && !fragment.isBlank()) {
            fragments.add(fragment.trim());
        }
    }

    @Override
    public FilterReply decide(ILoggingEvent event) {
        if (!event.getLoggerName().equals(loggerName)
                || event.getLevel().toInt() != ch.qos.logback.classic.Level.WARN_INT) {
            return FilterReply.NEUTRAL;
        }
        String message = event.getFormattedMessage();
        for (String fragment : fragments) {
            if (message != null && message.contains(fragment)) {
                return FilterReply.DENY;
            }
        }
        return FilterReply.NEUTRAL;
    }
}
