package org.yarndrf.shim.bridge;

/**
 * The Python service's py4j entry point, as Java sees it: one method taking one JSON message
 * (see docs/bridge.md for the versioned format) and returning one JSON reply.
 * Strings, not byte[]: py4j base64-encodes byte arrays, which costs ~5x.
 */
public interface CoreEndpoint {
  String call(String message);
}
