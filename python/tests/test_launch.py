"""The programmatic dependent launch switch (qgemm.set_programmatic_dependent_launch), on any
machine; the GPU behaviour is tested in test_torch.py and tests/core/test_launch_cuda.cu."""

import qgemm


def test_switch_reads_back_what_was_set():
    before = qgemm.programmatic_dependent_launch()
    try:
        qgemm.set_programmatic_dependent_launch(False)
        assert qgemm.programmatic_dependent_launch() is False
        qgemm.set_programmatic_dependent_launch(True)
        assert qgemm.programmatic_dependent_launch() is True
    finally:
        qgemm.set_programmatic_dependent_launch(before)
