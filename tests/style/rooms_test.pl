#!/usr/bin/env perl
# The sizes of the house style's rooms (docs/design.md §2), checked on the C++ sources (.h, .cc)
# outside tests/ and generated code:
#   1. no file over 900 lines;
#   2. no function over 120 lines, from its signature's first line to its closing brace; a table or
#      a switch over a table may be longer when a comment on its first line or the line above
#      says `NOLINT(readability-function-size)` and why (clang-tidy's marker);
#   3. no include circle: a file's unit is its folder's module and its name without the extension
#      (bsp/include/lockstep/bsp/x.h and bsp/io/x.cc are unit bsp/x), and no unit reaches itself
#      through the project's own `#include "..."` lines.
# Known offenders are listed in rooms_allowlist.txt (`file PATH`, `function PATH NAME`, `circle
# UNIT UNIT...`) while a restructuring is under way: a new offender fails the test, and so does a
# listed one that no longer offends (remove it from the list).
# Functions are found by braces, with comments, string and character literals and preprocessor
# lines blanked: a brace block at namespace or class scope whose head (the text since the last
# `;`, `{` or `}`) has a parenthesis and does not start with class, struct, union, enum, namespace
# or extern "C", and does not end with `=`, is a function body. Good enough for this code base.
# Usage: rooms_test.pl SOURCE_DIR
use strict;
use warnings;
use File::Find;

my $root = shift or die "usage: rooms_test.pl SOURCE_DIR\n";
chdir $root or die "cannot enter $root: $!\n";

my @dirs = grep { -d } qw(api apps bench bsp catalogue cli db dbsp examples fuzz generate partition
                          validate load runner);
my @files;
find(sub { push @files, $File::Find::name if /\.(cc|h)$/ && -f }, @dirs);
@files = sort map { s{^\./}{}r } @files;

my (%allowed, %seen_allowed);
open my $list, '<', 'tests/style/rooms_allowlist.txt' or die "rooms_allowlist.txt: $!\n";
while (<$list>) {
  s/#.*//;
  s/^\s+|\s+$//g;
  next if $_ eq '';
  $allowed{join ' ', split /\s+/} = 1;
}

my @violations;
sub offend {
  my ($key, $what) = @_;
  if ($allowed{$key}) { $seen_allowed{$key} = 1; return; }
  push @violations, $what;
}

# The text with comments, literals' contents and preprocessor lines blanked, newlines kept.
sub blank {
  my ($text) = @_;
  $text =~ s{ (R"([^(\s]*)\(.*?\)\2") | ("(?:\\.|[^"\\\n])*") | ('(?:\\.|[^'\\\n])*')
             | (//[^\n]*) | (/\*.*?\*/) }
            { my $m = $&; $m =~ s/[^\n]/ /g; defined $1 || defined $3 || defined $4 ? '"' . substr($m, 1) : $m }gsex;
  $text =~ s/^[ \t]*#.*$/ my $m = $&; $m =~ s![^\n]! !g; $m /gme;
  # Digit separators (1'000) were taken for character literals above only where a quote pair
  # closed on the same line; what is left of them is harmless to brace counting.
  return $text;
}

sub strip_templates {
  my ($head) = @_;
  while ($head =~ /\btemplate\s*</g) {
    my $start = $-[0];
    my $depth = 0;
    my $i = pos($head) - 1;
    for (; $i < length $head; ++$i) {
      my $c = substr($head, $i, 1);
      ++$depth if $c eq '<';
      --$depth if $c eq '>';
      last if $depth == 0;
    }
    substr($head, $start, $i - $start + 1) = ' ' x ($i - $start + 1);
    pos($head) = $start;
  }
  return $head;
}

my %includes;  # unit -> { unit => 1 }
for my $file (@files) {
  open my $in, '<', $file or die "$file: $!\n";
  my $original = do { local $/; <$in> };
  close $in;
  my @lines = split /\n/, $original, -1;
  my $count = @lines - ($original =~ /\n\z/ ? 1 : 0);
  offend("file $file", "$file: $count lines (at most 900)") if $count > 900;

  my ($module) = $file =~ m{^([^/]+)/};
  my ($name) = $file =~ m{([^/]+)\.(?:cc|h)$};
  my $unit = "$module/$name";
  for my $line (@lines) {
    next unless $line =~ /^\s*#\s*include\s*"([^"]+)"/;
    my $target = $1;
    # The project's own files only: beside the includer, under its module's root, or a module's
    # public header; anything else (absl/status/status.h) is another library's.
    my ($dir) = $file =~ m{^(.*)/};
    my @candidates = ("$dir/$target", "$module/$target");
    push @candidates, "$1/include/$target" if $target =~ m{^lockstep/([^/]+)/};
    my ($found) = grep { -f } @candidates;
    next unless defined $found;
    my ($to_module) = $found =~ m{^([^/]+)/};
    my ($to_name) = $found =~ m{([^/]+)\.(?:cc|h)$};
    my $to = "$to_module/$to_name";
    $includes{$unit}{$to} = 1 if $to ne $unit;
  }

  my $text = blank($original);
  my @stack;           # kinds of the open blocks: scope, data, function, inner
  my $head_start = 0;  # offset after the last ; { or } at the current level
  my $line = 1;
  my @open;            # for each function block: [first line, name]
  for (my $i = 0; $i < length $text; ++$i) {
    my $c = substr($text, $i, 1);
    if ($c eq "\n") { ++$line; next; }
    next unless $c eq '{' || $c eq '}' || $c eq ';';
    my $inside = @stack && ($stack[-1] eq 'function' || $stack[-1] eq 'inner' ||
                            $stack[-1] eq 'data');
    if ($c eq ';') {
      $head_start = $i + 1 unless $inside;
      next;
    }
    if ($c eq '{') {
      if ($inside) {
        push @stack, 'inner';
        next;
      }
      my $head = strip_templates(substr($text, $head_start, $i - $head_start));
      my $kind;
      if ($head =~ /^\s*(?:\[\[[^\]]*\]\]\s*)?(?:typedef\s+)?(?:class|struct|union)\b/ ||
          $head =~ /\bnamespace\b/ || $head =~ /^\s*extern\s*"/) {
        $kind = 'scope';
      } elsif ($head =~ /^\s*enum\b/ || $head =~ /=\s*$/ || $head =~ /\bconcept\b/ ||
               $head !~ /\(/) {
        $kind = 'data';
      } else {
        $kind = 'function';
        my $first = $line - (substr($text, $head_start, $i - $head_start) =~ tr/\n//);
        my $lead = substr($text, $head_start, $i - $head_start);
        $lead =~ /^(\s*)/;
        $first += ($1 =~ tr/\n//);
        my ($fname) = $head =~ /([~\w:]+(?:<[^()]*>)?|operator\s*\S+)\s*\(/;
        $fname //= '?';
        $fname =~ s/<.*//;
        push @open, [$first, $fname];
      }
      push @stack, $kind;
      $head_start = $i + 1;
      next;
    }
    # '}'
    my $kind = pop @stack // 'scope';
    if ($kind eq 'function') {
      my ($first, $fname) = @{pop @open};
      my $length = $line - $first + 1;
      my $marked = grep { defined && /NOLINT\(readability-function-size\)/ }
                   @lines[$first - 2 .. $first - 1];
      if ($length > 120 && !$marked) {
        offend("function $file $fname", "$file:$first: function $fname is $length lines (at most 120)");
      }
    }
    $head_start = $i + 1 unless @stack && ($stack[-1] eq 'function' || $stack[-1] eq 'inner' ||
                                          $stack[-1] eq 'data');
  }
}

# Include circles: strongly connected units (Tarjan).
my ($index, %idx, %low, %on, @st, @circles) = (0);
sub visit {
  my ($v) = @_;
  $idx{$v} = $low{$v} = $index++;
  push @st, $v;
  $on{$v} = 1;
  for my $w (sort keys %{$includes{$v} // {}}) {
    if (!exists $idx{$w}) {
      visit($w);
      $low{$v} = $low{$w} if $low{$w} < $low{$v};
    } elsif ($on{$w}) {
      $low{$v} = $idx{$w} if $idx{$w} < $low{$v};
    }
  }
  if ($low{$v} == $idx{$v}) {
    my @scc;
    while (1) {
      my $w = pop @st;
      $on{$w} = 0;
      push @scc, $w;
      last if $w eq $v;
    }
    push @circles, [sort @scc] if @scc > 1;
  }
}
visit($_) for grep { !exists $idx{$_} } sort keys %includes;
for my $c (@circles) {
  offend("circle @$c", "include circle: @$c");
}

for my $key (sort keys %allowed) {
  push @violations, "rooms_allowlist.txt lists '$key', which no longer offends: remove it"
    unless $seen_allowed{$key};
}
print "$_\n" for @violations;
printf "rooms: %d files; %d offenders allowed while the restructuring goes on\n",
  scalar @files, scalar keys %seen_allowed;
exit(@violations ? 1 : 0);
