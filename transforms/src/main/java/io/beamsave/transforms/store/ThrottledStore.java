package io.beamsave.transforms.store;

/**
 * A {@link Store} whose writes cross an emulated link: the body of every {@link #put} and {@link
 * #uploadPart} travels through a {@link LinkThrottle}, paid for as the store below reads it to
 * send it, once for each attempt (a retried part crosses the link again), so that the bytes
 * leave at the link's pace rather than in bursts. Every other call passes unchanged; reads are
 * not slowed. Writers that share a link share one throttle ({@link LinkThrottle#shared}).
 * Thread-safe as the wrapped store is.
 */
public final class ThrottledStore extends ForwardingStore {
  private final LinkThrottle link;

  private ThrottledStore(Store store, LinkThrottle link) {
    super(store);
    this.link = link;
  }

  /** {@code store} with its writes sent through {@code link}; {@code store} itself if null. */
  public static Store over(Store store, LinkThrottle link) {
    return link == null ? store : new ThrottledStore(store, link);
  }

  @Override
  public void put(String key, Body body, String contentType) {
    super.put(key, slowed(body), contentType);
  }

  @Override
  public String uploadPart(String key, String uploadId, int number, Body body, byte[] md5) {
    return super.uploadPart(key, uploadId, number, slowed(body), md5);
  }

  private Body slowed(Body body) {
    return body.through(in -> LinkThrottle.wrap(in, link));
  }
}
