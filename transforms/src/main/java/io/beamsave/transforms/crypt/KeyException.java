package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;

/**
 * An encrypted image none of the keys given opens (none given, or none it is for): not damage.
 * Carries the image's header, which says what the image is for and, to readers that need no
 * more, its id and lineage.
 */
public final class KeyException extends ImageException {
  private final transient Envelope envelope;
  private final boolean noKeyGiven;

  KeyException(String message, Envelope envelope, boolean noKeyGiven) {
    super(message);
    this.envelope = envelope;
    this.noKeyGiven = noKeyGiven;
  }

  public Envelope envelope() {
    return envelope;
  }

  /** Whether no key at all was given (rather than keys the image is not for). */
  public boolean noKeyGiven() {
    return noKeyGiven;
  }
}
