package io.beamsave.testing;

import io.beamsave.transforms.store.S3Settings;
import java.net.URI;
import java.nio.file.Path;
import java.util.Properties;
import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

/**
 * A real S3 server for tests: S3Proxy in this JVM on 127.0.0.1, storing objects as plain files
 * under a directory (so a test can damage one on "disk"). jclouds' {@code filesystem} backend,
 * not {@code filesystem-nio2}: the latter leaves the temporary file of an interrupted part
 * upload among the parts, after which listing that upload's parts fails. The SDK finds its credentials in the
 * {@code aws.accessKeyId}/{@code aws.secretAccessKey} system properties, as it would in
 * production from the environment.
 */
public final class S3TestServer implements TestS3 {
  public static final String NAME = "S3Proxy";
  public static final String ACCESS_KEY = "beamsave-test";
  public static final String SECRET_KEY = "beamsave-test-secret";

  private final S3Proxy proxy;
  private final BlobStoreContext context;
  private final Path root;

  private S3TestServer(S3Proxy proxy, BlobStoreContext context, Path root) {
    this.proxy = proxy;
    this.context = context;
    this.root = root;
  }

  /** Starts a server storing under {@code root}, with {@code buckets} created. */
  public static S3TestServer start(Path root, String... buckets) throws Exception {
    System.setProperty("aws.accessKeyId", ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", SECRET_KEY);
    Properties props = new Properties();
    props.setProperty("jclouds.filesystem.basedir", root.toString());
    BlobStoreContext context =
        ContextBuilder.newBuilder("filesystem")
            .credentials("unused", "unused")
            .overrides(props)
            .build(BlobStoreContext.class);
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(context.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .ignoreUnknownHeaders(true)
            .build();
    proxy.start();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!"STARTED".equals(proxy.getState())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("S3Proxy did not start: " + proxy.getState());
      }
      Thread.sleep(10);
    }
    BlobStore store = context.getBlobStore();
    for (String b : buckets) {
      store.createContainerInLocation(null, b);
    }
    return new S3TestServer(proxy, context, root);
  }

  @Override
  public String name() {
    return NAME;
  }

  /** S3Proxy's filesystem backend takes a conditional write whatever the condition. */
  @Override
  public boolean enforcesConditionalWrites() {
    return false;
  }

  @Override
  public int port() {
    return proxy.getPort();
  }


  /** Settings for a server (or a proxy in front of it) on {@code port}. */
  public static S3Settings settings(int port) {
    return new S3Settings("http://127.0.0.1:" + port, true, "us-east-1", S3Settings.DEFAULT_ATTEMPTS);
  }

  /** Where the object {@code bucket/key} lies on disk. */
  @Override
  public Path file(String bucket, String key) {
    return root.resolve(bucket).resolve(key);
  }

  public BlobStore blobStore() {
    return context.getBlobStore();
  }

  @Override
  public void close() throws Exception {
    proxy.stop();
    context.close();
  }
}
