// zklock's diagnostics channels as OpenTelemetry spans and metrics: the part to copy into an
// application. The channels are zklock's stable contract (see its README, "Tracing and metrics").
import { SpanStatusCode, context } from '@opentelemetry/api';
import { acquireChannel, lostChannel, releaseChannel } from 'zklock';

/**
 * Spans `zklock.acquire` and `zklock.release` (each a child of the span active where it was
 * called), histograms `zklock.lock.wait_time` and `zklock.lock.hold_time` (ms) and a counter
 * `zklock.lock.lost`, from `tracer` and `meter`. Returns the unsubscribe.
 */
export function instrumentZklock(tracer, meter) {
  const waitTime = meter.createHistogram('zklock.lock.wait_time', { unit: 'ms', description: 'from acquire() to its settlement' });
  const holdTime = meter.createHistogram('zklock.lock.hold_time', { unit: 'ms', description: 'from acquire() resolving to release()' });
  const lost = meter.createCounter('zklock.lock.lost', { description: 'leases that learned their lock is, or may be, lost' });
  // A tracing channel's events share one context object per call: its span is kept on it.
  const spans = new WeakMap();

  const traced = (name, attributesAtStart, onEnd) => ({
    start(message) {
      spans.set(message, tracer.startSpan(name, { attributes: attributesAtStart(message) }, context.active()));
    },
    error(message) {
      const span = spans.get(message);
      span?.recordException(message.error);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: message.errorCode ?? String(message.error) });
    },
    asyncEnd(message) {
      const span = spans.get(message);
      if (!span) return;
      onEnd(message, span);
      span.end();
    },
    // end: the call returned its promise; asyncStart: it settled (asyncEnd follows at once).
    end() {},
    asyncStart() {},
  });

  const acquire = traced(
    'zklock.acquire',
    (m) => ({ 'zklock.lock.path': m.lockPath, 'zklock.lock.kind': m.kind, ...(m.layout ? { 'zklock.lock.layout': m.layout } : {}) }),
    (m, span) => {
      span.setAttributes({
        'zklock.lock.wait_time_ms': m.waitTime,
        ...(m.queuePosition === undefined ? {} : { 'zklock.lock.queue_position': m.queuePosition }),
        ...(m.fencingToken === undefined ? {} : { 'zklock.lock.fencing_token': m.fencingToken, 'zklock.lock.node': m.node, 'zklock.session_id': m.sessionId }),
      });
      // Held only with a lease; null is a tryAcquire that found the lock taken; an error without a code is still an error.
      const outcome = 'error' in m ? (m.errorCode ?? 'ERROR') : m.result ? 'HELD' : 'NOT_FREE';
      waitTime.record(m.waitTime, { 'zklock.lock.kind': m.kind, 'zklock.outcome': outcome });
    },
  );
  const release = traced(
    'zklock.release',
    (m) => ({ 'zklock.lock.path': m.lockPath, 'zklock.lock.node': m.node, 'zklock.lock.fencing_token': m.fencingToken, 'zklock.session_id': m.sessionId, ...(m.kind ? { 'zklock.lock.kind': m.kind } : {}) }),
    (m, span) => {
      if (m.holdTime === undefined) return;
      span.setAttribute('zklock.lock.hold_time_ms', m.holdTime);
      holdTime.record(m.holdTime, m.kind ? { 'zklock.lock.kind': m.kind } : {});
    },
  );
  const onLost = (m) => lost.add(1, { 'zklock.lock.reason': m.reason, ...(m.kind ? { 'zklock.lock.kind': m.kind } : {}) });

  acquireChannel.subscribe(acquire);
  releaseChannel.subscribe(release);
  lostChannel.subscribe(onLost);
  return () => {
    acquireChannel.unsubscribe(acquire);
    releaseChannel.unsubscribe(release);
    lostChannel.unsubscribe(onLost);
  };
}
