set terminal pngcairo size 720,420
set output 'docs/img/bench/scaling.png'
set logscale xy
set xlabel 'flows'
set ylabel 'ns per packet (enqueue + dequeue, paced, slack 10 us)'
set key top left
set grid
plot 'docs/img/bench/scaling.dat' using 1:2 with linespoints title 'reference (kernel structures)', \
     '' using 1:3 with linespoints title 'fast', \
     '' using 1:4 with linespoints title 'binary heap pacer'
