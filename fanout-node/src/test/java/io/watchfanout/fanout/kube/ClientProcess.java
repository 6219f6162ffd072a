package io.watchfanout.fanout.kube;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A client program (a Node.js or Python script) that prints one JSON object per line: its lines
 * are collected as they come, its stderr kept in a file for failure messages. Closing kills it.
 */
final class ClientProcess implements AutoCloseable {
    private final Process process;
    private final Path stderr;
    private final List<JsonObject> lines = new CopyOnWriteArrayList<>();
    private final List<String> unparsed = new CopyOnWriteArrayList<>();

    private ClientProcess(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        Thread reader = new Thread(this::read, "client-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code command} in {@code directory}, its stderr into {@code stderr}. */
    static ClientProcess start(List<String> command, Path directory, Path stderr) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(directory.toFile());
        pb.redirectError(stderr.toFile());
        return new ClientProcess(pb.start(), stderr);
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                try {
                    lines.add(JsonParser.parseString(line).getAsJsonObject());
                } catch (RuntimeException e) {
                    unparsed.add(line);
                }
            }
        } catch (IOException e) {
            // the process was killed
        }
    }

    /** The JSON lines printed so far, in order. */
    List<JsonObject> lines() {
        return lines;
    }

    /** The lines with {@code field} equal to one of {@code values}, each as {@code "<value> <name> <node>"}. */
    List<String> events(String field, List<String> values) {
        return lines.stream()
                .filter(l -> l.has(field) && values.contains(l.get(field).getAsString()))
                .map(l -> l.get(field).getAsString() + " " + l.get("name").getAsString()
                        + (l.has("node") && !l.get("node").isJsonNull()
                                ? " " + l.get("node").getAsString()
                                : ""))
                .toList();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** What the program wrote that was not JSON, and its stderr: for failure messages. */
    String diagnostics() {
        String err;
        try {
            err = Files.readString(stderr);
        } catch (IOException e) {
            err = e.toString();
        }
        return "lines " + lines + "\nnon-JSON " + unparsed + "\nstderr " + err;
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
