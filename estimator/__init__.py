"""Estimator (DESIGN.md layer 4): job history store, sources, predictors of recurring jobs (thesis §2.2)
and MRCute parameter fits (thesis §3.1.2), producing the JobSpecs ``corral plan`` consumes.

It knows nothing about racks: it predicts what will run and how fast its tasks process data.
"""
