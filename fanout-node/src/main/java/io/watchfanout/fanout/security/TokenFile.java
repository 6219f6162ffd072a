package io.watchfanout.fanout.security;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code token} ({@code --token-auth-file}): static bearer tokens in kube-apiserver's
 * {@code --token-auth-file} format, one per line:
 *
 * <pre>{@code
 * # token,user,uid[,"group1,group2"]
 * 31ada4fd-adec-460c-809a-9e56ceb75269,alice,1001,"readers,dev"
 * }</pre>
 *
 * Fields are separated by commas; a field in double quotes may hold commas (and {@code ""} for
 * a quote); blank lines and lines starting with {@code #} are skipped. A line without token,
 * user and uid, with more than four fields or with a broken quote is an error naming its line
 * number, and so is a token listed twice. The file is read again when it changes
 * ({@link FileStamp}); a broken new file keeps the previous tokens.
 *
 * <p>A listed token establishes its user ({@link Identity.Method#TOKEN}); an unlisted
 * {@link TokenKind#OPAQUE} token is refused, an unlisted JWT or etcd token is passed on to
 * {@code jwt} and {@code etcd} ({@link TokenKind}). Tokens are looked up by their SHA-256 and
 * compared in constant time, so that response times tell nothing about a token's prefix.
 *
 * <p>Thread-safe: the tokens are replaced as a whole by {@link #reload()}.
 */
final class TokenFile implements Authenticator {
    private record Entry(byte[] token, Identity identity) {}

    private final ReloadingFile<Map<ByteBuffer, Entry>> tokens;

    /**
     * Reads the file.
     *
     * @throws IOException when it cannot be read or a line is malformed (the message names the line)
     */
    TokenFile(Path file) throws IOException {
        this.tokens = new ReloadingFile<>(file, TokenFile::parse);
    }

    @Override
    public Identity authenticate(Credentials credentials) throws AuthenticationException {
        String token = credentials.token();
        if (token == null) {
            return null;
        }
        byte[] presented = token.getBytes(StandardCharsets.UTF_8);
        Entry e = tokens.get().get(TokenDigest.of(presented));
        if (e != null && MessageDigest.isEqual(e.token(), presented)) {
            return e.identity();
        }
        if (TokenKind.of(token) != TokenKind.OPAQUE) {
            return null;
        }
        throw new AuthenticationException("unknown bearer token");
    }

    @Override
    public boolean reload() throws IOException {
        return tokens.reload();
    }

    @Override
    public String name() {
        return "token";
    }

    /** The number of tokens, for tests and the startup line. */
    int size() {
        return tokens.get().size();
    }

    private static Map<ByteBuffer, Entry> parse(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<ByteBuffer, Entry> out = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = file + ": line " + (i + 1);
            List<String> fields = fields(line, where);
            if (fields.size() < 3 || fields.size() > 4) {
                throw new IOException(
                        where + ": expected token,user,uid[,\"group1,group2\"], found " + fields.size() + " fields");
            }
            String token = fields.get(0);
            String user = fields.get(1);
            if (token.isEmpty() || user.isEmpty()) {
                throw new IOException(where + ": the token and the user must not be empty");
            }
            Set<String> groups = new LinkedHashSet<>();
            if (fields.size() == 4) {
                for (String g : fields.get(3).split(",", -1)) {
                    if (!g.strip().isEmpty()) {
                        groups.add(g.strip());
                    }
                }
            }
            byte[] bytes = token.getBytes(StandardCharsets.UTF_8);
            Entry previous =
                    out.put(TokenDigest.of(bytes), new Entry(bytes, new Identity(user, groups, Identity.Method.TOKEN)));
            if (previous != null) {
                throw new IOException(where + ": the token of user " + user + " is listed twice (also for user "
                        + previous.identity().name() + ")");
            }
        }
        return Map.copyOf(out);
    }

    /** The comma-separated fields of a line, with RFC 4180 quoting; surrounding spaces are dropped. */
    private static List<String> fields(String line, String where) throws IOException {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (true) {
            while (i < line.length() && line.charAt(i) == ' ') {
                i++;
            }
            StringBuilder field = new StringBuilder();
            if (i < line.length() && line.charAt(i) == '"') {
                i++;
                while (true) {
                    if (i >= line.length()) {
                        throw new IOException(where + ": a quoted field is not closed");
                    }
                    char c = line.charAt(i++);
                    if (c == '"' && i < line.length() && line.charAt(i) == '"') {
                        field.append('"');
                        i++;
                    } else if (c == '"') {
                        break;
                    } else {
                        field.append(c);
                    }
                }
                while (i < line.length() && line.charAt(i) == ' ') {
                    i++;
                }
                if (i < line.length() && line.charAt(i) != ',') {
                    throw new IOException(where + ": unexpected text after a quoted field");
                }
            } else {
                int comma = line.indexOf(',', i);
                int end = comma < 0 ? line.length() : comma;
                field.append(line, i, end);
                if (field.indexOf("\"") >= 0) {
                    throw new IOException(where + ": a quote inside an unquoted field");
                }
                i = end;
            }
            out.add(field.toString().strip());
            if (i >= line.length()) {
                return out;
            }
            i++; // the comma
        }
    }
}
