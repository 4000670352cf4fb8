set terminal pngcairo size 760,440
set output 'docs/img/bench/scaling.png'
set datafile missing 'NaN'
set logscale xy
set xlabel 'flows'
set ylabel 'ns per packet (enqueue + dequeue, paced, slack 10 us)'
set key top left
set grid
plot 'docs/img/bench/scaling.dat' using 1:2 with linespoints lc 1 pt 7 title 'reference (kernel structures)', \
     '' using 1:3 with linespoints lc 2 pt 7 title 'fast', \
     '' using 1:4 with linespoints lc 3 pt 7 title 'binary heap pacer', \
     '' using 1:5 with linespoints lc 1 dt 2 pt 6 title 'reference, shuffled order', \
     '' using 1:6 with linespoints lc 2 dt 2 pt 6 title 'fast, shuffled order', \
     '' using 1:7 with linespoints lc 3 dt 2 pt 6 title 'binary heap, shuffled order'
