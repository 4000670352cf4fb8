set terminal pngcairo size 900,560 noenhanced
set grid
set key outside right
set output 'docs/img/sim-sweep/interrupts.png'
set title 'interrupts/s over time'
set xlabel 'simulated time (s)'
set ylabel 'interrupts/s'
set yrange [0:*]
plot 'docs/img/sim-sweep/interrupts.dat' index 0 using 1:2 with linespoints title 'timer_slack=0 all', 'docs/img/sim-sweep/interrupts.dat' index 0 using 1:3 with lines dt 2 title 'timer_slack=0 timer', 'docs/img/sim-sweep/interrupts.dat' index 1 using 1:2 with linespoints title 'timer_slack=1us all', 'docs/img/sim-sweep/interrupts.dat' index 1 using 1:3 with lines dt 2 title 'timer_slack=1us timer', 'docs/img/sim-sweep/interrupts.dat' index 2 using 1:2 with linespoints title 'timer_slack=2us all', 'docs/img/sim-sweep/interrupts.dat' index 2 using 1:3 with lines dt 2 title 'timer_slack=2us timer', 'docs/img/sim-sweep/interrupts.dat' index 3 using 1:2 with linespoints title 'timer_slack=5us all', 'docs/img/sim-sweep/interrupts.dat' index 3 using 1:3 with lines dt 2 title 'timer_slack=5us timer', 'docs/img/sim-sweep/interrupts.dat' index 4 using 1:2 with linespoints title 'timer_slack=10us all', 'docs/img/sim-sweep/interrupts.dat' index 4 using 1:3 with lines dt 2 title 'timer_slack=10us timer', 'docs/img/sim-sweep/interrupts.dat' index 5 using 1:2 with linespoints title 'timer_slack=20us all', 'docs/img/sim-sweep/interrupts.dat' index 5 using 1:3 with lines dt 2 title 'timer_slack=20us timer', 'docs/img/sim-sweep/interrupts.dat' index 6 using 1:2 with linespoints title 'timer_slack=50us all', 'docs/img/sim-sweep/interrupts.dat' index 6 using 1:3 with lines dt 2 title 'timer_slack=50us timer', 'docs/img/sim-sweep/interrupts.dat' index 7 using 1:2 with linespoints title 'timer_slack=100us all', 'docs/img/sim-sweep/interrupts.dat' index 7 using 1:3 with lines dt 2 title 'timer_slack=100us timer', 'docs/img/sim-sweep/interrupts.dat' index 8 using 1:2 with linespoints title 'timer_slack=1ms all', 'docs/img/sim-sweep/interrupts.dat' index 8 using 1:3 with lines dt 2 title 'timer_slack=1ms timer'
set output 'docs/img/sim-sweep/lateness_cdf.png'
set title 'lateness (departure - due) CDF'
set xlabel 'lateness (us)'
set ylabel 'fraction of packets'
set yrange [0:1]
set logscale x
plot 'docs/img/sim-sweep/lateness_cdf.dat' index 0 using 1:2 with steps title 'timer_slack=0', 'docs/img/sim-sweep/lateness_cdf.dat' index 1 using 1:2 with steps title 'timer_slack=1us', 'docs/img/sim-sweep/lateness_cdf.dat' index 2 using 1:2 with steps title 'timer_slack=2us', 'docs/img/sim-sweep/lateness_cdf.dat' index 3 using 1:2 with steps title 'timer_slack=5us', 'docs/img/sim-sweep/lateness_cdf.dat' index 4 using 1:2 with steps title 'timer_slack=10us', 'docs/img/sim-sweep/lateness_cdf.dat' index 5 using 1:2 with steps title 'timer_slack=20us', 'docs/img/sim-sweep/lateness_cdf.dat' index 6 using 1:2 with steps title 'timer_slack=50us', 'docs/img/sim-sweep/lateness_cdf.dat' index 7 using 1:2 with steps title 'timer_slack=100us', 'docs/img/sim-sweep/lateness_cdf.dat' index 8 using 1:2 with steps title 'timer_slack=1ms'
unset logscale x
set output 'docs/img/sim-sweep/batch.png'
set title 'packets per qdisc run (runs that sent)'
set xlabel 'packets'
set ylabel 'fraction of runs'
set yrange [0:*]
set xrange [0:32]
set style fill solid 0.5
plot 'docs/img/sim-sweep/batch.dat' index 0 using 1:2 with linespoints title 'timer_slack=0', 'docs/img/sim-sweep/batch.dat' index 1 using 1:2 with linespoints title 'timer_slack=1us', 'docs/img/sim-sweep/batch.dat' index 2 using 1:2 with linespoints title 'timer_slack=2us', 'docs/img/sim-sweep/batch.dat' index 3 using 1:2 with linespoints title 'timer_slack=5us', 'docs/img/sim-sweep/batch.dat' index 4 using 1:2 with linespoints title 'timer_slack=10us', 'docs/img/sim-sweep/batch.dat' index 5 using 1:2 with linespoints title 'timer_slack=20us', 'docs/img/sim-sweep/batch.dat' index 6 using 1:2 with linespoints title 'timer_slack=50us', 'docs/img/sim-sweep/batch.dat' index 7 using 1:2 with linespoints title 'timer_slack=100us', 'docs/img/sim-sweep/batch.dat' index 8 using 1:2 with linespoints title 'timer_slack=1ms'
set xrange [*:*]
set output 'docs/img/sim-sweep/sweep.png'
set title 'sweep of timer_slack'
set xlabel 'timer_slack'
set ylabel 'interrupts/s'
set y2label 'p99 lateness (us)'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
plot 'docs/img/sim-sweep/sweep.dat' using 1:3:xtic(2) with linespoints title 'interrupts/s', 'docs/img/sim-sweep/sweep.dat' using 1:4 with linespoints title 'timer interrupts/s', 'docs/img/sim-sweep/sweep.dat' using 1:5 axes x1y2 with linespoints title 'p99 lateness (us)'
