package io.watchfanout.fanout.testing;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Decodes frames in tests. */
public final class Frames {
  private Frames() {}

  public static WatchEvent parseJsonLine(String line) {
    WatchEvent.Builder b = WatchEvent.newBuilder();
    try {
      JsonFormat.parser().merge(line, b);
    } catch (IOException e) {
      throw new UncheckedIOException("not a WatchEvent: " + line, e);
    }
    return b.build();
  }

  /** Decodes one frame of either encoding. */
  public static WatchEvent decode(ByteBuffer frame, boolean json) {
    byte[] bytes = new byte[frame.remaining()];
    frame.duplicate().get(bytes);
    if (json) {
      String s = new String(bytes, StandardCharsets.UTF_8);
      if (!s.endsWith("\n")) {
        throw new IllegalStateException("JSON frame without newline: " + s);
      }
      return parseJsonLine(s);
    }
    try {
      CodedInputStream in = CodedInputStream.newInstance(bytes);
      int len = in.readRawVarint32();
      WatchEvent e = WatchEvent.parseFrom(in.readRawBytes(len));
      if (!in.isAtEnd()) {
        throw new IllegalStateException("trailing bytes");
      }
      return e;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Decodes a stream of delimited WatchEvents. */
  public static List<WatchEvent> decodeDelimited(byte[] bytes) throws IOException {
    List<WatchEvent> out = new ArrayList<>();
    java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(bytes);
    WatchEvent e;
    while ((e = WatchEvent.parseDelimitedFrom(in)) != null) {
      out.add(e);
    }
    return out;
  }
}
