package org.yarndrf.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.security.MessageDigest;
import org.junit.jupiter.api.Test;

/**
 * The generated {@link Contract}, {@link ReplyValues}, ReplyWriters, {@link RequestValues} and
 * RequestReaders are those of the spec now: yarn_bridge/contract.yaml (a test resource, pom.xml)
 * has the SHA-256 the generator wrote into each. A spec edited without `make contract` fails here,
 * as the Python side's test_contract_spec.py fails for the Python tables and the docs.
 */
class ContractSpecTest {
  @Test
  void theGeneratedContractIsOfTheSpecAsItIsNow() throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    try (InputStream in = ContractSpecTest.class.getResourceAsStream("/spec/contract.yaml")) {
      assertTrue(in != null, "the spec is a test resource (pom.xml)");
      ByteArrayOutputStream spec = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      for (int n; (n = in.read(buffer)) > 0;) {
        spec.write(buffer, 0, n);
      }
      digest.update(spec.toByteArray());
    }
    StringBuilder sha = new StringBuilder();
    for (byte b : digest.digest()) {
      sha.append(String.format("%02x", b));
    }
    assertEquals(sha.toString(), Contract.SPEC_SHA256,
        "Contract.java is stale: run `make contract` (yarn_bridge/contract.yaml changed)");
    assertEquals(sha.toString(), ReplyValues.SPEC_SHA256,
        "ReplyValues.java is stale: run `make contract` (yarn_bridge/contract.yaml changed)");
    assertEquals(sha.toString(), ReplyWriters.SPEC_SHA256,
        "ReplyWriters.java is stale: run `make contract` (yarn_bridge/contract.yaml changed)");
    assertEquals(sha.toString(), RequestValues.SPEC_SHA256,
        "RequestValues.java is stale: run `make contract` (yarn_bridge/contract.yaml changed)");
    assertEquals(sha.toString(), RequestReaders.SPEC_SHA256,
        "RequestReaders.java is stale: run `make contract` (yarn_bridge/contract.yaml changed)");
    assertEquals(Contract.VERSION, Messages.VERSION);
  }
}
