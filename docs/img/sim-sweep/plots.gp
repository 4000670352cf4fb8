reset
set encoding utf8
set grid
set terminal pngcairo size 960,600 noenhanced font ',11'
set output 'interrupts.png'
set title 'interrupts/s over time (solid: all interrupts, dashed: timer interrupts)'
set xlabel 'simulated time (s)'
set ylabel 'interrupts/s'
set xrange [0:*]
set yrange [0:*]
set key outside right top vertical
plot 'interrupts.dat' index 0 using 1:2 with linespoints lc rgb '#0072B2' pt 7 ps 1.1 lw 2 title 'timer_slack=0: all', 'interrupts.dat' index 0 using 1:3 with linespoints lc rgb '#0072B2' pt 7 ps 1.1 lw 1 dt 2 title 'timer_slack=0: timer', 'interrupts.dat' index 1 using 1:2 with linespoints lc rgb '#D55E00' pt 5 ps 1.1 lw 2 title 'timer_slack=1us: all', 'interrupts.dat' index 1 using 1:3 with linespoints lc rgb '#D55E00' pt 5 ps 1.1 lw 1 dt 2 title 'timer_slack=1us: timer', 'interrupts.dat' index 2 using 1:2 with linespoints lc rgb '#009E73' pt 9 ps 1.1 lw 2 title 'timer_slack=2us: all', 'interrupts.dat' index 2 using 1:3 with linespoints lc rgb '#009E73' pt 9 ps 1.1 lw 1 dt 2 title 'timer_slack=2us: timer', 'interrupts.dat' index 3 using 1:2 with linespoints lc rgb '#CC79A7' pt 11 ps 1.1 lw 2 title 'timer_slack=5us: all', 'interrupts.dat' index 3 using 1:3 with linespoints lc rgb '#CC79A7' pt 11 ps 1.1 lw 1 dt 2 title 'timer_slack=5us: timer', 'interrupts.dat' index 4 using 1:2 with linespoints lc rgb '#E69F00' pt 13 ps 1.1 lw 2 title 'timer_slack=10us: all', 'interrupts.dat' index 4 using 1:3 with linespoints lc rgb '#E69F00' pt 13 ps 1.1 lw 1 dt 2 title 'timer_slack=10us: timer', 'interrupts.dat' index 5 using 1:2 with linespoints lc rgb '#56B4E9' pt 15 ps 1.1 lw 2 title 'timer_slack=20us: all', 'interrupts.dat' index 5 using 1:3 with linespoints lc rgb '#56B4E9' pt 15 ps 1.1 lw 1 dt 2 title 'timer_slack=20us: timer', 'interrupts.dat' index 6 using 1:2 with linespoints lc rgb '#000000' pt 6 ps 1.1 lw 2 title 'timer_slack=50us: all', 'interrupts.dat' index 6 using 1:3 with linespoints lc rgb '#000000' pt 6 ps 1.1 lw 1 dt 2 title 'timer_slack=50us: timer', 'interrupts.dat' index 7 using 1:2 with linespoints lc rgb '#999933' pt 4 ps 1.1 lw 2 title 'timer_slack=100us: all', 'interrupts.dat' index 7 using 1:3 with linespoints lc rgb '#999933' pt 4 ps 1.1 lw 1 dt 2 title 'timer_slack=100us: timer', 'interrupts.dat' index 8 using 1:2 with linespoints lc rgb '#882255' pt 8 ps 1.1 lw 2 title 'timer_slack=1ms: all', 'interrupts.dat' index 8 using 1:3 with linespoints lc rgb '#882255' pt 8 ps 1.1 lw 1 dt 2 title 'timer_slack=1ms: timer'
set terminal svg size 960,600 noenhanced dynamic font ',11'
set output 'interrupts.svg'
replot
unset output
reset
set encoding utf8
set grid
set terminal pngcairo size 960,600 noenhanced font ',11'
set output 'lateness_cdf.png'
set title 'lateness (departure - due), CDF over packets'
set xlabel 'lateness (us, log scale; 0 drawn at 0.001)'
set ylabel 'fraction of packets'
set yrange [0:1.02]
set logscale x
set key outside right top vertical
plot 'lateness_cdf.dat' index 0 using 1:2 with linespoints lc rgb '#0072B2' pt 7 ps 1.1 lw 2 pi 14 title 'timer_slack=0', 'lateness_cdf.dat' index 1 using 1:2 with linespoints lc rgb '#D55E00' pt 5 ps 1.1 lw 2 pi 21 title 'timer_slack=1us', 'lateness_cdf.dat' index 2 using 1:2 with linespoints lc rgb '#009E73' pt 9 ps 1.1 lw 2 pi 24 title 'timer_slack=2us', 'lateness_cdf.dat' index 3 using 1:2 with linespoints lc rgb '#CC79A7' pt 11 ps 1.1 lw 2 pi 31 title 'timer_slack=5us', 'lateness_cdf.dat' index 4 using 1:2 with linespoints lc rgb '#E69F00' pt 13 ps 1.1 lw 2 pi 35 title 'timer_slack=10us', 'lateness_cdf.dat' index 5 using 1:2 with linespoints lc rgb '#56B4E9' pt 15 ps 1.1 lw 2 pi 41 title 'timer_slack=20us', 'lateness_cdf.dat' index 6 using 1:2 with linespoints lc rgb '#000000' pt 6 ps 1.1 lw 2 pi 48 title 'timer_slack=50us', 'lateness_cdf.dat' index 7 using 1:2 with linespoints lc rgb '#999933' pt 4 ps 1.1 lw 2 pi 55 title 'timer_slack=100us', 'lateness_cdf.dat' index 8 using 1:2 with linespoints lc rgb '#882255' pt 8 ps 1.1 lw 2 pi 74 title 'timer_slack=1ms'
set terminal svg size 960,600 noenhanced dynamic font ',11'
set output 'lateness_cdf.svg'
replot
unset output
reset
set encoding utf8
set grid
set terminal pngcairo size 960,600 noenhanced font ',11'
set output 'batch.png'
set title 'packets per qdisc run (runs that sent)'
set xlabel 'packets per run'
set ylabel 'fraction of runs'
set yrange [0:*]
set xrange [0.5:32.5]
set xtics 1,2,32
set key outside right top vertical
plot 'batch.dat' index 0 using 1:2 with linespoints lc rgb '#0072B2' pt 7 ps 1.1 lw 2 title 'timer_slack=0', 'batch.dat' index 1 using 1:2 with linespoints lc rgb '#D55E00' pt 5 ps 1.1 lw 2 title 'timer_slack=1us', 'batch.dat' index 2 using 1:2 with linespoints lc rgb '#009E73' pt 9 ps 1.1 lw 2 title 'timer_slack=2us', 'batch.dat' index 3 using 1:2 with linespoints lc rgb '#CC79A7' pt 11 ps 1.1 lw 2 title 'timer_slack=5us', 'batch.dat' index 4 using 1:2 with linespoints lc rgb '#E69F00' pt 13 ps 1.1 lw 2 title 'timer_slack=10us', 'batch.dat' index 5 using 1:2 with linespoints lc rgb '#56B4E9' pt 15 ps 1.1 lw 2 title 'timer_slack=20us', 'batch.dat' index 6 using 1:2 with linespoints lc rgb '#000000' pt 6 ps 1.1 lw 2 title 'timer_slack=50us', 'batch.dat' index 7 using 1:2 with linespoints lc rgb '#999933' pt 4 ps 1.1 lw 2 title 'timer_slack=100us', 'batch.dat' index 8 using 1:2 with linespoints lc rgb '#882255' pt 8 ps 1.1 lw 2 title 'timer_slack=1ms'
set terminal svg size 960,600 noenhanced dynamic font ',11'
set output 'batch.svg'
replot
unset output
reset
set encoding utf8
set grid
set terminal pngcairo size 960,600 noenhanced font ',11'
set output 'sweep.png'
set title 'sweep of timer_slack'
set xlabel 'timer_slack (us), log scale; 0 drawn at the left'
set ylabel 'interrupts/s'
set y2label 'p99 lateness (us)'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key outside bottom center horizontal
set logscale x
set xrange [*:*] noextend
set offsets graph 0.04, graph 0.04, 0, 0
set xtics add ('0' 0.1)
plot 'sweep.dat' using 1:3 with linespoints lc rgb '#0072B2' pt 7 ps 1.1 lw 2 title 'interrupts/s (left)', 'sweep.dat' using 1:4 with linespoints lc rgb '#D55E00' pt 5 ps 1.1 lw 2 title 'timer interrupts/s (left)', 'sweep.dat' using 1:5 axes x1y2 with linespoints lc rgb '#009E73' pt 9 ps 1.1 lw 2 dt 2 title 'p99 lateness, us (right)'
set terminal svg size 960,600 noenhanced dynamic font ',11'
set output 'sweep.svg'
replot
unset output
