"""History sources: the JobHistory and ResourceManager REST APIs, SWIM traces, CSV/JSON imports.

Each source counts every row it reads in an :class:`~estimator.records.IngestReport` and skips a
row it cannot use with a counted reason; a source it cannot read at all raises HistoryInputError.
"""
