package io.watchfanout.fanout.frame;

/**
 * A wire encoding of watch frames and list answers, chosen by the request's {@code Accept}
 * header (README.md, "The watch protocol").
 */
public enum Encoding {
  /** One proto3 canonical JSON object of {@code WatchEvent} per line. */
  JSON("application/json"),
  /** {@code WatchEvent} messages, each preceded by its varint length (protobuf's delimited format). */
  PROTOBUF("application/x-protobuf"),
  /**
   * Server-Sent Events: per frame {@code id:} (the resource version, only where resuming is
   * safe, see {@link SseFrames}), {@code event:} (the frame's type) and {@code data:} (the JSON
   * frame without its newline). Only for watch streams.
   */
  SSE("text/event-stream");

  private static final Encoding[] VALUES = values();

  private final String mediaType;

  Encoding(String mediaType) {
    this.mediaType = mediaType;
  }

  /** The media type of this encoding, e.g. {@code application/json}. */
  public String mediaType() {
    return mediaType;
  }

  /** All encodings, in ordinal order (a shared array: do not modify). */
  static Encoding[] all() {
    return VALUES;
  }
}
