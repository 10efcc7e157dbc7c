package org.yarndrf.shim.bridge;

/** The core answered, but not with a well-formed reply of this version. */
public class MalformedReplyException extends Exception {
  public MalformedReplyException(String message) {
    super(message);
  }
}
