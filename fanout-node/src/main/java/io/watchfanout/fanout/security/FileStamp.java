package io.watchfanout.fanout.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;

/**
 * What tells a file changed without reading it: its modification time, size and file key
 * (inode). Kubernetes updates a mounted Secret or ConfigMap by swapping a symlink, which moves
 * all three; an editor saving in place moves the time and usually the size.
 */
record FileStamp(long modifiedNanos, long size, Object fileKey) {
    static FileStamp of(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        return new FileStamp(a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.size(), a.fileKey());
    }
}
