package io.watchfanout.fanout.http;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.watch.Statuses;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The query string of a request, percent-decoded to raw bytes: etcd keys are arbitrary
 * bytes, and decoding them as UTF-8 text (as servlet-style parameter maps do) would corrupt
 * them. {@code +} means a space, as in HTML forms and Go's {@code url.ParseQuery}; send a
 * literal plus as {@code %2B}.
 *
 * <p>Immutable after parsing; thread-safe.
 */
final class QueryParams {
  private final Map<String, ByteString> values;

  private QueryParams(Map<String, ByteString> values) {
    this.values = values;
  }

  /**
   * Parses a raw (still percent-encoded) query string.
   *
   * @throws ApiException 400 for bad percent-encoding or a parameter given twice
   */
  static QueryParams parse(String rawQuery) throws ApiException {
    Map<String, ByteString> values = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return new QueryParams(values);
    }
    for (String part : rawQuery.split("&", -1)) {
      if (part.isEmpty()) {
        continue;
      }
      int eq = part.indexOf('=');
      String rawName = eq < 0 ? part : part.substring(0, eq);
      String name = decode(rawName, rawName).toString(StandardCharsets.UTF_8);
      ByteString value = eq < 0 ? ByteString.EMPTY : decode(part.substring(eq + 1), name);
      if (values.putIfAbsent(name, value) != null) {
        throw new ApiException(Statuses.badRequest(
            "parameter " + name + " is given more than once (expected: at most once)"));
      }
    }
    return new QueryParams(values);
  }

  private static ByteString decode(String s, String param) throws ApiException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '+') {
        out.write(' ');
      } else if (c == '%') {
        int hi = i + 1 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
        int lo = i + 2 < s.length() ? Character.digit(s.charAt(i + 2), 16) : -1;
        if (hi < 0 || lo < 0) {
          throw new ApiException(Statuses.badRequest("parameter " + param + ": bad percent-encoding \""
              + s + "\" at position " + i + " (expected: % followed by two hex digits)"));
        }
        out.write(hi << 4 | lo);
        i += 2;
      } else if (c < 0x80) {
        out.write(c);
      } else {
        byte[] utf8 = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        out.write(utf8, 0, utf8.length);
      }
    }
    return ByteString.copyFrom(out.toByteArray());
  }

  /** The raw bytes of a parameter, or null when absent. */
  ByteString bytes(String name) {
    return values.get(name);
  }

  /** The parameter as UTF-8 text, or null when absent. */
  String text(String name) {
    ByteString v = values.get(name);
    return v == null ? null : v.toStringUtf8();
  }

  /**
   * A boolean parameter: {@code true}/{@code false} (any case) or {@code 1}/{@code 0};
   * absent or empty = false.
   */
  boolean bool(String name) throws ApiException {
    String v = text(name);
    if (v == null || v.isEmpty()) {
      return false;
    }
    if (v.equalsIgnoreCase("true") || v.equals("1")) {
      return true;
    }
    if (v.equalsIgnoreCase("false") || v.equals("0")) {
      return false;
    }
    throw new ApiException(Statuses.badRequest(
        "parameter " + name + ": \"" + v + "\" (expected: true or false)"));
  }

  /**
   * A non-negative integer parameter; absent or empty = {@code absent}.
   *
   * @param what the meaning, for the error message, e.g. "a revision"
   */
  long nonNegative(String name, long absent, String what) throws ApiException {
    String v = text(name);
    if (v == null || v.isEmpty()) {
      return absent;
    }
    try {
      long n = Long.parseLong(v);
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // fall through to the error below
    }
    throw new ApiException(Statuses.badRequest(
        "parameter " + name + ": \"" + v + "\" (expected: " + what + ", a non-negative integer)"));
  }
}
