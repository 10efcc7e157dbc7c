package org.yarndrf.shim.bridge;

/** The core could not be reached, timed out, or broke the connection. */
public class CoreUnavailableException extends Exception {
  private final boolean timeout;

  public CoreUnavailableException(String message, Throwable cause, boolean timeout) {
    super(message, cause);
    this.timeout = timeout;
  }

  public boolean isTimeout() {
    return timeout;
  }
}
