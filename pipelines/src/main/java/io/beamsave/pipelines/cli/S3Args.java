package io.beamsave.pipelines.cli;

import io.beamsave.transforms.store.S3Settings;
import picocli.CommandLine.Option;

/** How to reach object storage, for every command that takes an {@code s3://} location. */
final class S3Args {
  @Option(
      names = "--s3-endpoint",
      paramLabel = "URL",
      description =
          "S3-compatible endpoint (MinIO, Ceph, IBM COS, S3Proxy), e.g. http://127.0.0.1:9000."
              + " Default: $AWS_ENDPOINT_URL, else AWS itself. Credentials come from the AWS"
              + " default chain ($AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY, ~/.aws, roles).")
  String endpoint;

  @Option(
      names = "--s3-path-style",
      arity = "0..1",
      paramLabel = "BOOL",
      description =
          "Address buckets as http://host/BUCKET rather than http://BUCKET.host. Default: on"
              + " with an explicit endpoint, off for AWS.")
  Boolean pathStyle;

  @Option(
      names = "--s3-region",
      paramLabel = "REGION",
      description = "Region to sign requests for. Default: $AWS_REGION, else us-east-1.")
  String region;

  @Option(
      names = "--s3-timeout",
      paramLabel = "SECONDS",
      defaultValue = "" + S3Settings.DEFAULT_TIMEOUT_SECONDS,
      description =
          "How long a request to object storage may go unanswered, its retries included, before"
              + " the command fails (3 to 3600): each attempt waits a third of it for the server"
              + " to answer. Default: ${DEFAULT-VALUE}.")
  int timeoutSeconds;

  S3Settings settings() {
    if (timeoutSeconds < 3 || timeoutSeconds > 3600) {
      throw new io.beamsave.transforms.BeamsaveException("--s3-timeout " + timeoutSeconds
          + ": give 3 to 3600 seconds");
    }
    return S3Settings.resolve(endpoint, pathStyle, region).withTimeoutSeconds(timeoutSeconds);
  }
}
