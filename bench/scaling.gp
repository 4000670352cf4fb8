set terminal pngcairo size 900,560
set output 'docs/img/bench/scaling.png'
set datafile missing 'NaN'
set logscale xy
set xlabel 'flows'
set ylabel 'ns per packet (enqueue + dequeue, paced)'
set key top left
set grid
plot 'docs/img/bench/scaling.dat' using 1:2 with linespoints lc 1 pt 7 title 'reference (kernel structures), timer-driven, slack 10 us', \
     '' using 1:3 with linespoints lc 2 pt 7 title 'fast, timer-driven', \
     '' using 1:4 with linespoints lc 3 pt 7 title 'binary heap pacer, timer-driven', \
     '' using 1:8 with linespoints lc 1 dt 3 pt 4 title 'reference, dequeue after every packet', \
     '' using 1:9 with linespoints lc 2 dt 3 pt 4 title 'fast, dequeue after every packet', \
     '' using 1:10 with linespoints lc 3 dt 3 pt 4 title 'binary heap, dequeue after every packet', \
     '' using 1:5 with linespoints lc 1 dt 2 pt 6 title 'reference, shuffled order', \
     '' using 1:6 with linespoints lc 2 dt 2 pt 6 title 'fast, shuffled order', \
     '' using 1:7 with linespoints lc 3 dt 2 pt 6 title 'binary heap, shuffled order'
