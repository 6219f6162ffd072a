package io.watchfanout.fanout.http;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import io.watchfanout.fanout.watch.Statuses;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;

/**
 * The opaque {@code continue} token of a paged list: the revision of the first page (all
 * pages are read at it) and the next key, as URL-safe base64 (like Kubernetes' tokens).
 *
 * @param revision the revision the list is read at
 * @param nextKey the first key of the next page
 */
record ContinueToken(long revision, ByteString nextKey) {
  String encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      out.writeUInt64NoTag(revision);
      out.writeBytesNoTag(nextKey);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.toByteArray());
  }

  /** @throws ApiException 400 when the token was not made by {@link #encode()} */
  static ContinueToken decode(String token) throws ApiException {
    try {
      CodedInputStream in = CodedInputStream.newInstance(Base64.getUrlDecoder().decode(token));
      long revision = in.readUInt64();
      ByteString key = in.readBytes();
      if (!in.isAtEnd() || revision <= 0) {
        throw new IOException("trailing bytes or no revision");
      }
      return new ContinueToken(revision, key);
    } catch (IOException | IllegalArgumentException e) {
      throw new ApiException(Statuses.badRequest("parameter continue: \"" + token
          + "\" is not a valid token (expected: the continue field of a previous page)"));
    }
  }
}
