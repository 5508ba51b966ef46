#!/usr/bin/env bash
# Build ARX (https://github.com/arx-deidentifier/arx, Apache 2.0) and the side-by-side driver
# ArxOptimal.java, into a cache folder outside the repository (nothing of ARX is committed).
#
# Usage: bench/peers/arx_setup.sh [ARX_GIT_DIR]
#   ARX_GIT_DIR  a git directory (bare or not) of arx-deidentifier/arx; default: clone it
#                from GitHub into the cache.  The build takes the commit at HEAD.
# Environment: ARX_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/structanon-peers/arx).
#
# Only the classes the driver reaches are compiled (javac -sourcepath), against ARX's own
# jars in lib/ant, so the GUI and the Hadoop classifier code (whose jars are missing from
# some snapshots) are not needed.  Needs a JDK >= 11 (tested with 17).
# Prints the classpath to run the driver with on its last line.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${ARX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/structanon-peers/arx}"
mkdir -p "$CACHE"
GIT_DIR_IN="${1:-}"
if [ -z "$GIT_DIR_IN" ]; then
    if [ ! -d "$CACHE/arx.git" ]; then
        git clone --bare --depth 1 https://github.com/arx-deidentifier/arx.git "$CACHE/arx.git"
    fi
    GIT_DIR_IN="$CACHE/arx.git"
fi
COMMIT="$(git --git-dir="$GIT_DIR_IN" rev-parse HEAD)"
SRC="$CACHE/src-$COMMIT"
if [ ! -d "$SRC/src/main" ]; then
    rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
    # the jars that are present (a snapshot may lack the largest ones)
    files=$(git --git-dir="$GIT_DIR_IN" ls-tree -r --name-only HEAD src/main lib/ant data \
        | grep -E '^(src/main/|lib/ant/.*\.jar$|data/adult)' )
    for f in $files; do
        if git --git-dir="$GIT_DIR_IN" cat-file -e "HEAD:$f" 2>/dev/null; then
            mkdir -p "$SRC.tmp/$(dirname "$f")"
            git --git-dir="$GIT_DIR_IN" show "HEAD:$f" > "$SRC.tmp/$f"
        fi
    done
    mv "$SRC.tmp" "$SRC"
fi
JARS=$(find "$SRC/lib/ant" -name '*.jar' ! -path '*eclipse*' ! -path '*swt*' | sort | tr '\n' ':')
# pdfbox-app (ARX's certificate code, reached through ARXResult) is missing from some
# snapshots: Debian's libpdfbox2-java stands in for it (apt-get install libpdfbox2-java)
if [ ! -f "$SRC/lib/ant/pdfbox/pdfbox-app-2.0.1.jar" ]; then
    for j in /usr/share/java/pdfbox2.jar /usr/share/java/fontbox2.jar; do
        if [ -f "$j" ]; then JARS="$JARS$j:"; else
            echo "missing $j: apt-get install libpdfbox2-java" >&2; exit 1; fi
    done
fi
# hadoop-core (reached through the classifiers of ARXResult's statistics) is missing from
# some snapshots too: a one-interface stand-in for org.apache.hadoop.io.Writable suffices
STUBS="$CACHE/stubs"
if [ ! -f "$SRC/lib/ant/mahout/hadoop-core-1.2.1.jar" ]; then
    mkdir -p "$STUBS/org/apache/hadoop/io"
    cat > "$STUBS/org/apache/hadoop/io/Writable.java" <<'JAVA'
package org.apache.hadoop.io;
public interface Writable {
    void write(java.io.DataOutput out) throws java.io.IOException;
    void readFields(java.io.DataInput in) throws java.io.IOException;
}
JAVA
fi
OUT="$CACHE/classes-$COMMIT"
if [ ! -f "$OUT/ArxOptimal.class" ] || [ "$HERE/ArxOptimal.java" -nt "$OUT/ArxOptimal.class" ]; then
    mkdir -p "$OUT"
    # the Log4j configuration and other resources ARX loads from its class path
    (cd "$SRC/src/main" && find . -type f ! -name '*.java' -exec cp --parents {} "$OUT" \;)
    javac -nowarn -encoding UTF-8 -source 8 -target 8 -Xlint:-options -d "$OUT" \
        -cp "$JARS" -sourcepath "$SRC/src/main:$STUBS" "$HERE/ArxOptimal.java" 2>&1 \
        | grep -v '^Note:' | tee "$CACHE/javac.log" >&2 || true
    if grep -q ' error' "$CACHE/javac.log"; then rm -f "$OUT/ArxOptimal.class"; exit 1; fi
fi
echo "ARX $COMMIT built in $OUT ($(find "$OUT" -name '*.class' | wc -l) classes)" >&2
echo "$OUT:$JARS"
