package io.beamsave.transforms.store;

import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.http.auth.aws.scheme.AwsV4AuthScheme;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.scheme.AuthScheme;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.identity.spi.IdentityProviders;

/**
 * SigV4 without aws-chunked bodies. Over plain HTTP (MinIO, Ceph or S3Proxy on a private
 * network) the SDK must sign the payload, and by default does it chunk by chunk: a 64 KiB-framed
 * body with an HMAC per 128 KiB that the client computes and the server checks again. Signing
 * the payload's one SHA-256 instead, as the AWS CLI does, costs both sides far less CPU; over
 * HTTPS the SDK leaves the payload unsigned either way. Integrity does not depend on it: every
 * part also carries its Content-MD5.
 */
final class WholePayloadSigner implements HttpSigner<AwsCredentialsIdentity> {
  private final AwsV4HttpSigner delegate = AwsV4HttpSigner.create();

  /** The SigV4 auth scheme with this signer. */
  static AuthScheme<AwsCredentialsIdentity> scheme() {
    AwsV4AuthScheme v4 = AwsV4AuthScheme.create();
    WholePayloadSigner signer = new WholePayloadSigner();
    return new AuthScheme<>() {
      @Override
      public String schemeId() {
        return v4.schemeId();
      }

      @Override
      public IdentityProvider<AwsCredentialsIdentity> identityProvider(IdentityProviders providers) {
        return v4.identityProvider(providers);
      }

      @Override
      public HttpSigner<AwsCredentialsIdentity> signer() {
        return signer;
      }
    };
  }

  @Override
  public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
    return delegate.sign(
        request.copy(b -> b.putProperty(AwsV4FamilyHttpSigner.CHUNK_ENCODING_ENABLED, false)));
  }

  @Override
  public CompletableFuture<AsyncSignedRequest> signAsync(
      AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
    return delegate.signAsync(
        request.copy(b -> b.putProperty(AwsV4FamilyHttpSigner.CHUNK_ENCODING_ENABLED, false)));
  }
}
