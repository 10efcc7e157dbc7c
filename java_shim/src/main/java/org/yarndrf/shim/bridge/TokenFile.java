package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The bridge token file, used only when nobody but its owner, the user running the RM, can read or
 * change it (the rule of yarn_bridge/token_file.py, which `yarn-drf serve` applies to the same file).
 */
public final class TokenFile {
  private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(
      PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_EXECUTE);

  private TokenFile() {
  }

  /**
   * The file's content, trimmed.
   * @param key where the path came from, for the message (a yarn-site.xml key)
   * @throws IOException saying what is wrong and how to fix it
   */
  public static String read(Path file, String key) throws IOException {
    String where = key + " " + file;
    PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
    if (view != null) {  // null on a file system without owners and modes: nothing to check
      PosixFileAttributes attrs = view.readAttributes();
      if (!attrs.isRegularFile()) {
        throw new IOException("yarn-drf: " + where + " is not a regular file");
      }
      if (!OWNER_ONLY.containsAll(attrs.permissions())) {
        throw new IOException("yarn-drf: " + where + " is readable or writable by other users ("
            + PosixFilePermissions.toString(attrs.permissions()) + "), so they could learn or "
            + "replace the bridge token; fix it with `chmod 600 " + file + "`");
      }
      String user = System.getProperty("user.name");
      if (!attrs.owner().getName().equals(user)) {
        throw new IOException("yarn-drf: " + where + " belongs to " + attrs.owner().getName()
            + ", not to " + user + " who runs the ResourceManager, so its owner could change the "
            + "token; fix it with `chown " + user + " " + file + "`");
      }
    }
    String token = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
    if (token.isEmpty()) {
      throw new IOException("yarn-drf: " + where + " is empty");
    }
    return token;
  }
}
