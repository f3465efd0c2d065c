module inferencebench.io/model-sim

go 1.24
