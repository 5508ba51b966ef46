import pytest

DISEASES = {
    "respiratory system diseases": {
        "respiratory infection": ["flu", "pneumonia", "bronchitis"],
        "vascular lung diseases": ["pulmonary edema", "pulmonary embolism"],
    },
    "digestive system diseases": {
        "stomach diseases": ["gastric ulcer", "gastritis", "stomach cancer"],
        "colon diseases": ["colitis", "colon cancer"],
    },
}


@pytest.fixture
def disease_hierarchy():
    from structanon import Hierarchy

    return Hierarchy.from_dict(DISEASES)
