package io.beamsave.transforms.store;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Store} that passes every call to the store it wraps, unchanged: the base of a wrapper
 * that changes a few calls and must pass on the rest, including those the contract gains later.
 * Thread-safe as the wrapped store is.
 */
abstract class ForwardingStore implements Store {
  private final Store store;

  ForwardingStore(Store store) {
    this.store = store;
  }

  @Override
  public String where(String key) {
    return store.where(key);
  }

  @Override
  public void check(String key) {
    store.check(key);
  }

  @Override
  public Optional<Stat> stat(String key) {
    return store.stat(key);
  }

  @Override
  public void read(String key, String etag, long offset, byte[] buf, int off, int len) {
    store.read(key, etag, offset, buf, off, len);
  }

  @Override
  public byte[] get(String key) {
    return store.get(key);
  }

  @Override
  public void put(String key, Body body, String contentType) {
    store.put(key, body, contentType);
  }

  @Override
  public List<Item> list(String prefix) {
    return store.list(prefix);
  }

  @Override
  public void delete(String key) {
    store.delete(key);
  }

  @Override
  public String createMultipart(String key, String contentType, Map<String, String> metadata) {
    return store.createMultipart(key, contentType, metadata);
  }

  @Override
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    return store.uploadPart(key, uploadId, number, body, md5);
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from) {
    return store.copyPart(key, uploadId, number, from);
  }

  @Override
  public String copyPart(String key, String uploadId, int number, String from, String fromEtag,
      long offset, long length) {
    return store.copyPart(key, uploadId, number, from, fromEtag, offset, length);
  }

  @Override
  public List<Part> parts(String key, String uploadId) {
    return store.parts(key, uploadId);
  }

  @Override
  public String complete(String key, String uploadId, List<Part> parts, String expect) {
    return store.complete(key, uploadId, parts, expect);
  }

  @Override
  public void checkHolds(String key, String expect) {
    store.checkHolds(key, expect);
  }

  @Override
  public void abort(String key, String uploadId) {
    store.abort(key, uploadId);
  }

  @Override
  public List<Upload> uploads(String prefix) {
    return store.uploads(prefix);
  }

  @Override
  public boolean wantsPartMd5() {
    return store.wantsPartMd5();
  }

  @Override
  public Lease lease(String key, byte[] content) {
    return store.lease(key, content);
  }

  @Override
  public List<FoundLease> leases(String name) {
    return store.leases(name);
  }

  @Override
  public java.time.Instant now() {
    return store.now();
  }
}
