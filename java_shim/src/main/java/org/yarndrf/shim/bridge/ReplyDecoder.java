package org.yarndrf.shim.bridge;

/** Reads a reply's text into what the caller wants from it (Messages has one for each request type). */
public interface ReplyDecoder<T> {
  /** @throws MalformedReplyException naming what is wrong with the reply */
  T decode(String reply) throws MalformedReplyException;
}
