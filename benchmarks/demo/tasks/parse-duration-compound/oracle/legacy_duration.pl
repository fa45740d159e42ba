#!/usr/bin/perl
# The scheduler's old duration reader, kept as the executable oracle for parse_duration.
# Protocol: one duration per line on stdin; prints the total in seconds with three decimals,
# or "error" for text that is not a sequence of <number><unit> components.
use strict;
use warnings;

my %SECONDS = (ms => 0.001, s => 1, m => 60, h => 3600, d => 86400, w => 604800);

sub seconds_of {
    my ($text) = @_;
    my $rest = $text;
    $rest =~ s/^\s+//;
    my ($total, $components) = (0, 0);
    while (length $rest) {
        return "error" unless $rest =~ s/^(\d+(?:\.\d+)?)\s*([a-z]+)\s*//;
        my ($number, $unit) = ($1, $2);
        return "error" unless exists $SECONDS{$unit};
        $total += $number * $SECONDS{$unit};
        $components++;
    }
    return "error" unless $components;
    return sprintf("%.3f", $total);
}

$| = 1;
while (my $line = <STDIN>) {
    chomp $line;
    print seconds_of($line), "\n";
}
