# Flow sizes of Facebook's Hadoop cluster (Roy et al., "Inside the Social
# Network's (Datacenter) Network", SIGCOMM 2015), as the HPCC simulator
# ships it (traffic_gen/FbHdp_distribution.txt):
# BYTES CUMULATIVE-PERCENT, linear between points.
# Most flows are small (half under 700 bytes); the mean is set by the tail.
0 0
100 1
200 2
300 5
350 15
400 20
500 30
600 40
700 50
1000 60
2000 67
7000 70
30000 72
50000 82
80000 87
120000 90
300000 95
1000000 97.5
2000000 99
10000000 100
