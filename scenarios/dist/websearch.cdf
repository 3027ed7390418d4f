# Flow sizes of the web-search workload (Alizadeh et al., "Data Center
# TCP (DCTCP)", SIGCOMM 2010, measured in a production cluster), as the
# HPCC simulator ships it (traffic_gen/WebSearch_distribution.txt):
# BYTES CUMULATIVE-PERCENT, linear between points.
# Mean 1.71 MB (of the interpolated CDF), set by the flows over 1 MB.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
