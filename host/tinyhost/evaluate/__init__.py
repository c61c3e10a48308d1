"""`tinyhost eval`: labelled data through the device, the int8 reference and the float model.

One module per job: `data` loads a labelled set, `metrics` turns outputs into figures,
`runner` fans the samples out over worker processes and logs them as they come.
"""
