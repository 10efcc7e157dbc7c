package org.yarndrf.shim.bridge;

/** The core could not be reached, timed out, broke the connection, or was not the core. */
public class CoreUnavailableException extends Exception {
  private final boolean timeout;
  private final boolean unverified;

  public CoreUnavailableException(String message, Throwable cause, boolean timeout) {
    this(message, cause, timeout, false);
  }

  private CoreUnavailableException(String message, Throwable cause, boolean timeout,
      boolean unverified) {
    super(message, cause);
    this.timeout = timeout;
    this.unverified = unverified;
  }

  /** The listener on the bridge port did not prove it holds the token; nothing was sent to it. */
  public static CoreUnavailableException unverified(String message, Throwable cause) {
    return new CoreUnavailableException(message, cause, false, true);
  }

  public boolean isTimeout() {
    return timeout;
  }

  public boolean isUnverified() {
    return unverified;
  }
}
