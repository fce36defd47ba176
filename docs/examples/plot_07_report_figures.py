"""
The reproduction report's comparison figures
============================================

``optmech reproduce`` writes a report that sets every certified result beside what the papers state,
and two comparisons beyond them: how far the deployed (ε, δ) noises are from the certified optimum,
on ℝ (the Gaussians, Laplace, the truncated Laplace) and on ℤ (the discrete Laplace, the truncated
discrete Laplace, the discrete Gaussian, the rounded Tulap). This example runs those two catalogue
specs on the report's quick grids and shows the figures exactly as the report draws them (the same
code, :mod:`optmech.reproduce`).
"""

# %%
# Run the two comparison specs (quick grids: a few seconds) into a temporary report folder.

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from optmech.reproduce import reproduce

out = Path(tempfile.mkdtemp(prefix="optmech-report-"))
outcome = reproduce(out, quick=True, workers=1, only=["comparison-gaussian-gap", "comparison-integer-noise"])
figures = sorted((out / "figures").glob("comparison-*.png"))
print([f.name for f in figures])

# %%
# Each cell is the certified extra cost of a deployed noise, V_ref/V* − 1, at the conservative end of
# its certified interval (the colour bar says so); hatched cells have intervals wider than 1 %.

for path in figures:
    image = mpimg.imread(path)
    height, width = image.shape[:2]
    fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.imshow(image)
    ax.set_axis_off()
plt.show()
