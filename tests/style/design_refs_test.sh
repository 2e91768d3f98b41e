#!/usr/bin/env bash
# Every citation of the design in a tracked file names a section docs/design.md has: a `§N` needs a
# heading `## N.` and a `§N.M` (or a lettered `§N.Ma`) a heading `### N.M` (`### N.Ma`). Code,
# tests, scripts and docs cite the design as `docs/design.md §N.M` or, in a file that already
# named it, as a bare `§N.M`; when the design moves or drops a section, this test names every
# citation left behind (`file:line: §N.M: no such section in docs/design.md`), and
# scripts/dev/renumber_design_refs.py moves them.
#
# Not design citations, so not checked: numbers of three levels (`§2.3.1`, the Graphalytics
# specification's) and a `§` within 40 characters after the name of another document (RFC, FIPS,
# a specification, a paper: `RFC 4122 §4.3`, `SIGMOD 2010, §5.2`).
# Usage: design_refs_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
cd "$source_dir"

if [ ! -f docs/design.md ]; then
  echo "FAIL: $source_dir/docs/design.md not found" >&2
  exit 1
fi
if ! files=$(git ls-files); then
  echo "FAIL: $source_dir: git ls-files failed; the check needs a git checkout" >&2
  exit 1
fi

# Sections the design has, one per line: "4" from "## 4. ...", "4.4" from "### 4.4 ...".
sections=$(perl -CSD -ne 'print "$1\n" if /^## (\d+)\.\s/; print "$1\n" if /^### (\d+\.\d+[a-z]?)\s/' \
  docs/design.md)
if [ -z "$sections" ]; then
  echo "FAIL: docs/design.md has no numbered sections" >&2
  exit 1
fi

# Text files only (grep -I), NUL-separated so that any file name passes.
printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 grep -IlZ -- '§' 2>/dev/null \
  | SECTIONS="$sections" perl -CSD -0 -ne '
    BEGIN {
      %have = map { $_ => 1 } split /\n/, $ENV{SECTIONS};
      $bad = 0;
    }
    chomp(my $file = $_);
    next if $file eq "";
    open(my $fh, "<:encoding(UTF-8)", $file) or die "cannot read $file: $!\n";
    local $/ = "\n";
    while (my $line = <$fh>) {
      while ($line =~ /\x{A7}(\d+(?:\.\d+[a-z]?)?)(?![\d.]*\d)/g) {
        my ($ref, $at) = ($1, $-[0]);
        my $before = substr($line, $at > 40 ? $at - 40 : 0, $at > 40 ? 40 : $at);
        next if $before =~ /\b(?:RFC|FIPS|SIGMOD|spec(?:ification)?\b|et al\.)/;
        next if $have{$ref};
        print "$file:$.: \x{A7}$ref: no such section in docs/design.md\n";
        $bad++;
      }
    }
    close($fh);
    END {
      if ($bad) {
        print STDERR "FAIL: $bad citation(s) of sections docs/design.md does not have " .
                     "(scripts/dev/renumber_design_refs.py moves citations)\n";
        exit 1;
      }
    }'
echo "ok: every design citation names a section of docs/design.md"
